/**
 * Builds a CustomResourceDefinition from effect Schemas: the spec and status schemas go through
 * `Schema.toJsonSchemaDocument` and `toStructural`; CEL rules travel as `x-kubernetes-validations` annotations on the
 * schemas themselves. ADR 20261202-crd-generation.
 */
import { Schema } from "effect"
import { stringify } from "yaml"
import type { CelRule } from "./common"
import type { ResourceKind } from "./resource"
import { toStructural, unbounded } from "./structural"

export interface PrinterColumn {
  readonly name: string
  readonly type: "string" | "integer" | "number" | "boolean" | "date"
  readonly jsonPath: string
  readonly description?: string
  /** 0 = shown by `kubectl get`; 1 = only with `-o wide`. */
  readonly priority?: 0 | 1
}

export interface CrdDefinition {
  readonly kind: ResourceKind
  readonly singular: string
  readonly shortNames: ReadonlyArray<string>
  readonly categories: ReadonlyArray<string>
  readonly description: string
  readonly spec: Schema.Top
  readonly status: Schema.Top
  /** Rules on the object root; they may read `self.metadata.name`. */
  readonly rootRules: ReadonlyArray<CelRule>
  readonly printerColumns: ReadonlyArray<PrinterColumn>
}

type Json = Record<string, unknown>

/** Structural OpenAPI v3 for one schema; refuses anything unbounded. */
export const openApiOf = (schema: Schema.Top, at: string): Json => {
  const doc = Schema.toJsonSchemaDocument(schema, {
    onExcessProperty: "error",
    includeAnnotationKey: (k) => k.startsWith("x-kubernetes-"),
  })
  const structural = toStructural(doc.schema, doc.definitions as Json, at)
  const loose = unbounded(structural, at)
  if (loose.length > 0) throw new Error(`Unbounded fields break the CEL cost budget:\n${loose.join("\n")}`)
  return structural
}

export const conditionColumn = (type: string, field: "status" | "reason" | "message") => `.status.conditions[?(@.type=="${type}")].${field}`

export const buildCrd = (def: CrdDefinition): Json => {
  const { group, version, kind, plural } = def.kind
  const root: Json = {
    description: def.description,
    type: "object",
    required: ["spec"],
    properties: {
      apiVersion: { description: "APIVersion of this object.", type: "string" },
      kind: { description: "Kind of this object.", type: "string" },
      metadata: { type: "object" },
      spec: openApiOf(def.spec, "spec"),
      status: openApiOf(def.status, "status"),
    },
    ...(def.rootRules.length > 0 ? { "x-kubernetes-validations": def.rootRules } : {}),
  }
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      names: { kind, listKind: `${kind}List`, plural, singular: def.singular, shortNames: def.shortNames, categories: def.categories },
      scope: def.kind.namespaced ? "Namespaced" : "Cluster",
      versions: [
        {
          name: version,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: def.printerColumns,
          schema: { openAPIV3Schema: root },
        },
      ],
    },
  }
}

export const GENERATED_HEADER = "# Generated from packages/api by `npx tsx packages/api/src/generate-crds.ts`. DO NOT EDIT.\n"

export const renderCrdYaml = (def: CrdDefinition): string => GENERATED_HEADER + stringify(buildCrd(def), { lineWidth: 0, aliasDuplicateObjects: false })
