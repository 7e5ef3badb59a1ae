/**
 * JSON text a user gave in a file (the config file, `--mapping`, `--title-map`). Only
 * effect/Result: the config file is read while every command parses its flags.
 */
import * as Result from "effect/Result"

/**
 * Parses the text; the failure says only where, `not valid JSON (at character N)`: the
 * parser's own message quotes the text, which may hold a token (a wrong file given by
 * mistake, a config file's token).
 */
export const parseJsonText = (text: string): Result.Result<unknown, string> => {
  try {
    return Result.succeed(JSON.parse(text) as unknown)
  } catch (e) {
    const at = e instanceof Error ? /position (\d+)/.exec(e.message) : null
    return Result.fail(`not valid JSON${at ? ` (at character ${at[1]})` : ""}`)
  }
}
