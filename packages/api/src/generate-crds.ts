/**
 * Writes `crds/*.yaml`, `policies/*.yaml` (admission policies and approver roles) and `docs/api/conditions.md` from the effect Schemas and condition catalogs. Run: `npx tsx packages/api/src/generate-crds.ts` (or `npm run crds`).
 * The golden test in crds.test.ts fails when `crds/` differs from what this writes.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { dirname } from "node:path"
import { fileURLToPath } from "node:url"
import { renderConditionCatalog } from "./catalog-doc"
import { assertedIn, tierTestFiles } from "./asserted-in-tests"
import { renderCrds } from "./crds"
import { renderPolicies } from "./policies"

export const CRDS_DIR = fileURLToPath(new URL("../../../crds/", import.meta.url))
export const POLICIES_DIR = fileURLToPath(new URL("../../../policies/", import.meta.url))
export const CATALOG_FILE = fileURLToPath(new URL("../../../docs/api/conditions.md", import.meta.url))

const main = (): void => {
  mkdirSync(CRDS_DIR, { recursive: true })
  for (const { file, yaml } of renderCrds()) {
    writeFileSync(`${CRDS_DIR}${file}`, yaml)
    process.stdout.write(`Wrote crds/${file}\n`)
  }
  mkdirSync(POLICIES_DIR, { recursive: true })
  for (const { file, yaml } of renderPolicies()) {
    mkdirSync(dirname(`${POLICIES_DIR}${file}`), { recursive: true })
    writeFileSync(`${POLICIES_DIR}${file}`, yaml)
    process.stdout.write(`Wrote policies/${file}\n`)
  }
  mkdirSync(dirname(CATALOG_FILE), { recursive: true })
  writeFileSync(CATALOG_FILE, renderConditionCatalog(assertedIn(tierTestFiles()).of))
  process.stdout.write("Wrote docs/api/conditions.md\n")
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) main()
