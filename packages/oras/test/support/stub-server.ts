// An in-process HTTP server for unit tests of behaviour a real registry will not show on demand (throttling,
// lying digests, the referrers API that distribution 2.8 lacks). The real-registry tests live in *.int.test.ts.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { type AddressInfo } from "node:net"

export interface RecordedRequest {
  readonly method: string
  readonly url: string
  readonly headers: IncomingMessage["headers"]
  readonly body: Buffer
}

export interface StubServer {
  /** 127.0.0.1:port */
  readonly address: string
  readonly requests: RecordedRequest[]
  close(): Promise<void>
}

export type StubHandler = (req: RecordedRequest, res: ServerResponse) => void | Promise<void>

export const startStub = async (handler: StubHandler): Promise<StubServer> => {
  const requests: RecordedRequest[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const recorded = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks) }
      requests.push(recorded)
      Promise.resolve(handler(recorded, res)).catch((e: unknown) => {
        res.statusCode = 599
        res.end(String(e))
      })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    address: `127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** Writes a JSON (or raw) response. */
export const reply = (res: ServerResponse, status: number, headers: Record<string, string> = {}, body: string | Buffer = "") => {
  res.writeHead(status, { "content-length": String(Buffer.byteLength(body)), ...headers })
  res.end(body)
}
