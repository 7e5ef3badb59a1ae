import * as Data from "effect/Data"

export class ImportUsageError extends Data.TaggedError("ImportUsageError")<{ readonly message: string }> {}

export class ImportFailed extends Data.TaggedError("ImportFailed")<{ readonly message: string }> {}
