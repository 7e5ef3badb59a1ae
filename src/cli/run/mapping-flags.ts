/**
 * `--people FILE` and `--title-map FILE.json` of import-csv and migrate, read before
 * anything is read or sent: a file that cannot be used is one line naming the file and
 * what is wrong, and the usage exit code.
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import { type PeopleMap, readPeopleFile, readTitleMapFile, type TitleMap } from "../../sync/mapping-files.ts"
import { type CliExit, usageError } from "../exit.ts"

const readText = (flag: string, name: string): Effect.Effect<string, CliExit> =>
  Effect.try({
    try: () => fs.readFileSync(name, "utf8"),
    catch: (e) =>
      usageError(`${flag} ${name}: ${(e as { code?: unknown }).code === "ENOENT" ? "file not found" : `cannot be read (${(e as Error).message})`}`)
  })

const readWith = <A extends object>(flag: string, name: string, read: (name: string, text: string) => A | { readonly error: string }) =>
  Effect.flatMap(readText(flag, name), (text) => {
    const r = read(name, text)
    return "error" in r ? Effect.fail(usageError(r.error)) : Effect.succeed(r as A)
  })

/** `--people FILE`: the CSV `name,email` (a target e-mail or `skip` a row). */
export const peopleFile = (name: string): Effect.Effect<PeopleMap, CliExit> => readWith("--people", name, readPeopleFile)

/** `--title-map FILE.json`: list and tag titles of the source as the target has them. */
export const titleMapFile = (name: string | undefined): Effect.Effect<TitleMap | undefined, CliExit> =>
  name === undefined ? Effect.succeed(undefined) : readWith("--title-map", name, readTitleMapFile)
