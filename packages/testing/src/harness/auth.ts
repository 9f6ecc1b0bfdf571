// Authentication material of one harness dir: static tokens (tokens.csv), the ServiceAccount signing key, the
// audit policy, and kubeconfig files. Everything is generated once per dir and reused, so an apiserver restarted
// on the same dir accepts the same tokens and verifies the same ServiceAccount tokens.
import { generateKeyPairSync, randomBytes } from "node:crypto"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { stringify } from "yaml"
import { ensureDir } from "./proc"

export interface StaticUser {
  token: string
  user: string
  groups: string[]
}

/** Test users (key → user name and groups). Plain users have no RBAC grants at all. */
export const DEFAULT_USERS: Readonly<Record<string, { readonly user: string; readonly groups: readonly string[] }>> = {
  admin: { user: "admin", groups: ["system:masters"] },
  alice: { user: "alice", groups: ["team-a"] },
  bob: { user: "bob", groups: ["team-b", "viewers"] },
  carol: { user: "carol", groups: [] },
  approver: { user: "approver", groups: ["aicr-approvers"] },
  tenant: { user: "tenant", groups: ["tenants"] },
}

/** Members of this group have their reads (get, list, watch) audited as well as their writes. */
export const AUDIT_READS_GROUP = "aicr:audit-reads"

/** Identities of the control-plane components (distinct user names, so the audit log tells who wrote what). */
export const COMPONENT_USERS: Readonly<Record<string, { readonly user: string; readonly groups: readonly string[] }>> = {
  "kube-controller-manager": { user: "system:kube-controller-manager", groups: ["system:masters"] },
  "kube-scheduler": { user: "system:kube-scheduler", groups: ["system:masters"] },
  kwok: { user: "system:kwok-controller", groups: ["system:masters"] },
  kubelet: { user: "system:aicr-harness-kubelet", groups: ["system:masters"] },
  // The webhook stand-in writes caBundles into webhook configurations, APIServices and CRDs (egress/egress.ts).
  "webhook-stand-in": { user: "system:aicr-harness-webhook-stand-in", groups: ["system:masters"] },
  // Argo CD's application-controller deploys whatever an Application holds, cluster-wide (argocd.ts).
  "argocd-application-controller": { user: "system:argocd-application-controller", groups: ["system:masters"] },
  // An operator controller whose reads are audited too (benchmarks count its API requests from the audit log).
  "aicr-audited-controller": { user: "system:aicr-audited-controller", groups: ["system:masters", AUDIT_READS_GROUP] },
}

export interface AuthMaterial {
  readonly users: Record<string, StaticUser>
  readonly components: Record<string, StaticUser>
  readonly tokenFile: string
  readonly saKey: string
  readonly saPub: string
  readonly auditPolicy: string
}

// Writes only; reads are not audited, except those of AUDIT_READS_GROUP. Node heartbeats (kube-node-lease) would be
// most of the log, so they are off.
const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
  - level: None
    namespaces: ["kube-node-lease"]
    resources: [{group: "coordination.k8s.io", resources: ["leases"]}]
  - level: Metadata
    verbs: ["create", "update", "patch", "delete", "deletecollection"]
  - level: Metadata
    userGroups: ["${AUDIT_READS_GROUP}"]
    verbs: ["get", "list", "watch"]
  - level: None
`

const mint = (spec: Readonly<Record<string, { readonly user: string; readonly groups: readonly string[] }>>) =>
  Object.fromEntries(Object.entries(spec).map(([k, u]) => [k, { token: randomBytes(24).toString("base64url"), user: u.user, groups: [...u.groups] }]))

const csvLine = (u: StaticUser): string =>
  [u.token, u.user, `uid-${u.user.replace(/[^a-zA-Z0-9-]/g, "-")}`, ...(u.groups.length ? [`"${u.groups.join(",")}"`] : [])].join(",")

/** Creates (first call) or loads (later calls) the auth material under dir. */
export const ensureAuth = (dir: string): AuthMaterial => {
  const pki = ensureDir(join(dir, "pki"))
  const authJson = join(dir, "auth.json")
  let users: Record<string, StaticUser>
  let components: Record<string, StaticUser>
  if (existsSync(authJson)) {
    ;({ users, components } = JSON.parse(readFileSync(authJson, "utf8")) as {
      users: Record<string, StaticUser>
      components: Record<string, StaticUser>
    })
    // A dir made before a component identity existed gets it now (the token file is rewritten below).
    const missing = Object.fromEntries(Object.entries(COMPONENT_USERS).filter(([k]) => components[k] === undefined))
    if (Object.keys(missing).length > 0) {
      components = { ...components, ...mint(missing) }
      writeFileSync(authJson, JSON.stringify({ users, components }, null, 2), { mode: 0o600 })
    }
  } else {
    users = mint(DEFAULT_USERS)
    components = mint(COMPONENT_USERS)
    writeFileSync(authJson, JSON.stringify({ users, components }, null, 2), { mode: 0o600 })
  }
  const tokenFile = join(dir, "tokens.csv")
  writeFileSync(tokenFile, [...Object.values(users), ...Object.values(components)].map(csvLine).join("\n") + "\n", { mode: 0o600 })
  const saKey = join(pki, "sa.key")
  const saPub = join(pki, "sa.pub")
  if (!existsSync(saKey) || !existsSync(saPub)) {
    const { privateKey, publicKey } = generateKeyPairSync("rsa", {
      modulusLength: 2048,
      privateKeyEncoding: { type: "pkcs1", format: "pem" },
      publicKeyEncoding: { type: "spki", format: "pem" },
    })
    writeFileSync(saKey, privateKey, { mode: 0o600 })
    writeFileSync(saPub, publicKey)
  }
  const auditPolicy = join(dir, "audit-policy.yaml")
  writeFileSync(auditPolicy, AUDIT_POLICY)
  return { users, components, tokenFile, saKey, saPub, auditPolicy }
}

/** The static identity of one component of the plane recorded in dir (auth.json), e.g. for Argo CD. */
export const componentUser = (dir: string, name: string): StaticUser => {
  const authJson = join(dir, "auth.json")
  const components = existsSync(authJson) ? (JSON.parse(readFileSync(authJson, "utf8")) as { components: Record<string, StaticUser> }).components : {}
  const u = components[name]
  if (!u) throw new Error(`harness: ${authJson} has no identity for ${name}; start the plane in ${dir} afresh (down, then up)`)
  return u
}

export interface KubeconfigUser {
  readonly name: string
  readonly token: string
  readonly as?: string
  readonly asGroups?: readonly string[]
}

/** Writes a kubeconfig with one cluster and one context per user; the first user is the current context. */
export const writeKubeconfig = (path: string, server: string, caFile: string, users: readonly KubeconfigUser[]): string => {
  const doc = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "aicr-harness", cluster: { server, "certificate-authority": caFile } }],
    users: users.map((u) => ({
      name: u.name,
      user: { token: u.token, ...(u.as ? { as: u.as } : {}), ...(u.asGroups?.length ? { "as-groups": [...u.asGroups] } : {}) },
    })),
    contexts: users.map((u) => ({ name: u.name, context: { cluster: "aicr-harness", user: u.name } })),
    "current-context": users[0]?.name ?? "",
    preferences: {},
  }
  writeFileSync(path, stringify(doc), { mode: 0o600 })
  return path
}
