/**
 * The local upstream: the fixture charts served the two ways public charts are, so the registry mirror (and Argo
 * CD, helm, the bench) can be pointed at something real on a machine that cannot reach the public repositories.
 *
 * - HTTP Helm repositories: `node:http` on loopback; each public repository URL gets its own path
 *   (`https://charts.jetstack.io` → `http://127.0.0.1:PORT/charts.jetstack.io/index.yaml` and the `.tgz`s beside it).
 * - OCI: charts whose source is `oci://…` are pushed with `@aicr/oras` into a registry (one from `startRegistry`, or
 *   the one passed in) under the same path (`oci://ghcr.io/nvidia` → `oci://127.0.0.1:PORT/ghcr.io/nvidia`).
 *
 * `rewrites` maps each public source to its local address; the registry mirror takes them as upstream rewrites.
 *
 * What is served: the stand-in charts (default; small, fast, and the ones tests bend on purpose), or with
 * `charts: "real"` the real packages of `third-party/charts/` (`real.ts`) wherever the folder has the chart at that
 * version (the stand-in otherwise; `UpstreamChart.origin` says which).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { type AddressInfo } from "node:net"
import { OciClient, staticCredentials } from "@aicr/oras"
import { type Registry, startRegistry } from "@aicr/testing/harness"
import { packageChart, type PackagedChart } from "./chart"
import { FIXTURE_COMPONENTS, type FixtureComponent, isOciSource } from "./fixtures"
import { FIXED_CREATED, indexYaml, ociRepoPath, repoPath } from "./helm-repo"
import { findRealChart, readRealCharts, type RealChart, realChartsDir } from "./real"

export interface ChartUpstreamOptions {
  /** Components to serve (default: the reference recipe's). Manifest-only ones have no chart and are skipped. */
  readonly components?: readonly FixtureComponent[]
  /** Filler bytes per chart name, overriding the fixture's (to make one chart large for a benchmark). */
  readonly fillerBytes?: Readonly<Record<string, number>>
  /**
   * Where `oci://` sources are pushed: `true` (default) starts a registry with `startRegistry` and stops it with
   * the upstream; a registry `host:port` (plus optional basic credentials) uses that one; `false` serves no OCI
   * sources at all (`ociPrefix` is then undefined and those charts are not served).
   */
  readonly oci?: boolean | { readonly registry: string; readonly username?: string; readonly password?: string }
  /** HTTP port (default: any free one). */
  readonly port?: number
  /**
   * `"stand-in"` (default): the fixture charts. `"real"`: the real packages of `realChartsDir` (default
   * `realChartsDir()`; an error when there is none), a stand-in only for a chart the folder does not hold.
   */
  readonly charts?: "stand-in" | "real"
  readonly realChartsDir?: string
}

/** One chart the upstream serves. */
export interface UpstreamChart {
  readonly name: string
  readonly version: string
  /** The public repository the recipe names (`https://…` or `oci://…`). */
  readonly repo: string
  /** Where it is served: the local repository URL (`http://…` or `oci://…`). */
  readonly url: string
  /** sha256 of the chart archive. */
  readonly digest: string
  /** OCI only: `host:port/path/chart:tag` and the manifest digest. */
  readonly ref?: string
  readonly manifestDigest?: string
  readonly size: number
  /** `real`: the project's own package from the real charts folder; `stand-in`: a fixture chart. */
  readonly origin: "real" | "stand-in"
}

export interface ChartUpstream {
  /** `http://127.0.0.1:PORT` */
  readonly httpUrl: string
  /** `oci://127.0.0.1:PORT` of the registry holding the `oci://` sources, when there is one. */
  readonly ociPrefix?: string
  readonly charts: readonly UpstreamChart[]
  /** Public source → local address, one entry per repository. */
  readonly rewrites: Readonly<Record<string, string>>
  /** Requests the HTTP side served (method and path), in order. */
  readonly requests: ReadonlyArray<{ readonly method: string; readonly path: string; readonly status: number }>
  /** Make the HTTP side answer every request with `status` (e.g. 503) until called with `undefined`. */
  fail(status: number | undefined): void
  stop(): Promise<void>
}

const realPackages = (dir: string | undefined): readonly RealChart[] => {
  const d = dir ?? realChartsDir()
  if (d === undefined)
    throw new Error("No real charts folder: set AICR_CHARTS_DIR or AICR_THIRD_PARTY_DIR, or put third-party/charts in ../shared beside the checkout")
  return readRealCharts(d)
}

const listen = (server: Server, port: number) =>
  new Promise<number>((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, "127.0.0.1", () => resolve((server.address() as AddressInfo).port))
  })

/** Starts the local upstream. Stop it with `stop()` (it also stops a registry it started). */
export const startChartUpstream = async (options: ChartUpstreamOptions = {}): Promise<ChartUpstream> => {
  const components = (options.components ?? FIXTURE_COMPONENTS).filter((c) => c.chart !== undefined && c.version !== undefined) as Array<
    FixtureComponent & { chart: string; version: string }
  >
  const ociOption = options.oci ?? true
  const real = options.charts === "real" ? realPackages(options.realChartsDir) : []
  const packaged = components.map((c) => {
    const r = findRealChart(real, c.chart, c.version)
    return {
      c,
      pkg: r ?? packageChart(c, { fillerBytes: options.fillerBytes?.[c.chart] }),
      origin: r !== undefined ? ("real" as const) : ("stand-in" as const),
    }
  })

  // HTTP repositories: path → index + archives.
  const repos = new Map<string, Array<PackagedChart | RealChart>>()
  for (const { c, pkg } of packaged)
    if (!isOciSource(c.source)) (repos.get(repoPath(c.source)) ?? repos.set(repoPath(c.source), []).get(repoPath(c.source))!).push(pkg)
  const routes = new Map<string, { type: string; body: Buffer }>()
  for (const [path, charts] of repos) {
    routes.set(`${path}/index.yaml`, { type: "application/x-yaml", body: Buffer.from(indexYaml(charts)) })
    for (const pkg of charts) routes.set(`${path}/${pkg.file}`, { type: "application/gzip", body: pkg.tgz })
  }
  const requests: Array<{ method: string; path: string; status: number }> = []
  let failWith: number | undefined
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname)
    const route = routes.get(path)
    const status = failWith ?? (req.method !== "GET" && req.method !== "HEAD" ? 405 : route === undefined ? 404 : 200)
    requests.push({ method: req.method ?? "", path, status })
    if (status !== 200 || route === undefined) {
      res.writeHead(status, { "content-type": "text/plain" }).end(`${status}\n`)
      return
    }
    res.writeHead(200, { "content-type": route.type, "content-length": String(route.body.length) })
    res.end(req.method === "HEAD" ? undefined : route.body)
  })
  server.keepAliveTimeout = 1_000
  const port = await listen(server, options.port ?? 0)
  const httpUrl = `http://127.0.0.1:${port}`

  // OCI sources.
  let registry: Registry | undefined
  let ociRegistry: string | undefined
  const pushed = new Map<string, { ref: string; manifestDigest: string }>()
  const ociCharts = packaged.filter(({ c }) => isOciSource(c.source))
  try {
    if (ociOption !== false && ociCharts.length > 0) {
      if (ociOption === true) registry = await startRegistry({ name: "chart-upstream" })
      ociRegistry = ociOption === true ? registry!.address : ociOption.registry
      const creds =
        typeof ociOption === "object" && ociOption.username !== undefined
          ? staticCredentials({ [ociRegistry]: { username: ociOption.username, password: ociOption.password ?? "" } })
          : undefined
      const client = new OciClient(creds !== undefined ? { credentials: creds } : {})
      try {
        for (const { c, pkg } of ociCharts) {
          const p = await client.pushChart(`${ociRegistry}/${ociRepoPath(c.source)}/${c.chart}`, pkg.tgz, { created: FIXED_CREATED })
          pushed.set(`${c.chart}@${c.version}`, {
            ref: `${ociRegistry}/${ociRepoPath(c.source)}/${c.chart}:${p.reference.tag}`,
            manifestDigest: p.manifest.digest,
          })
        }
      } finally {
        await client.close()
      }
    }
  } catch (e) {
    server.close()
    await registry?.stop()
    throw e
  }

  const rewrites: Record<string, string> = {}
  const charts: UpstreamChart[] = []
  for (const { c, pkg, origin } of packaged) {
    if (isOciSource(c.source)) {
      const p = pushed.get(`${c.chart}@${c.version}`)
      if (p === undefined || ociRegistry === undefined) continue
      rewrites[c.source] = `oci://${ociRegistry}/${ociRepoPath(c.source)}`
      charts.push({
        name: c.chart,
        version: c.version,
        repo: c.source,
        url: rewrites[c.source]!,
        digest: pkg.digest,
        ref: p.ref,
        manifestDigest: p.manifestDigest,
        size: pkg.tgz.length,
        origin,
      })
    } else {
      rewrites[c.source] = `${httpUrl}${repoPath(c.source)}`
      charts.push({ name: c.chart, version: c.version, repo: c.source, url: rewrites[c.source]!, digest: pkg.digest, size: pkg.tgz.length, origin })
    }
  }

  return {
    httpUrl,
    ...(ociRegistry !== undefined ? { ociPrefix: `oci://${ociRegistry}` } : {}),
    charts,
    rewrites,
    requests,
    fail: (status) => void (failWith = status),
    stop: async () => {
      await new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
      await registry?.stop()
    },
  }
}
