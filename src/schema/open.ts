/**
 * Structs that keep keys they do not declare. The service's documents say clients
 * tolerate extra keys; keeping them (instead of stripping) lets a snapshot or an
 * export hold exactly what the service sent.
 */
import { Schema } from "effect"

const preserve = { parseOptions: { onExcessProperty: "preserve" } } as const

/** `Schema.Struct` whose decode and encode keep undeclared keys, at any depth below it. */
export const openStruct = <Fields extends Schema.Struct.Fields>(fields: Fields): Schema.Struct<Fields> =>
  Schema.Struct(fields).annotations(preserve)
