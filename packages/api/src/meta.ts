/**
 * `metadata` as our decoders read it: the fields controllers use, everything else ignored. The CRDs leave
 * `metadata` to the API server (`type: object`), so this schema never reaches `crds/`.
 */
import { Schema } from "effect"

const StringMap = Schema.Record(Schema.String, Schema.String)

export const KubeObjectMeta = Schema.Struct({
  name: Schema.String,
  namespace: Schema.optionalKey(Schema.String),
  uid: Schema.optionalKey(Schema.String),
  generation: Schema.optionalKey(Schema.Int),
  resourceVersion: Schema.optionalKey(Schema.String),
  labels: Schema.optionalKey(StringMap),
  annotations: Schema.optionalKey(StringMap),
  finalizers: Schema.optionalKey(Schema.Array(Schema.String)),
  deletionTimestamp: Schema.optionalKey(Schema.String),
  creationTimestamp: Schema.optionalKey(Schema.String),
})
export type KubeObjectMeta = typeof KubeObjectMeta.Type
