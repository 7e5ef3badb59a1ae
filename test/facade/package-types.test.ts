/**
 * The package as a TypeScript project uses it: `import ... from "worksync"` resolves the
 * declarations in dist/types (package.json `exports`), which compile under a consumer's
 * own settings. The sources import each other with `.ts` extensions; pointing `types`
 * at them made every consumer without `allowImportingTsExtensions` fail to compile.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { expect, it } from "vitest"

const root = path.resolve(import.meta.dirname, "../..")

it("a consumer project compiles against the published declarations of all three entry points, and they are typed (not any)", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-consumer-"))
  try {
    fs.mkdirSync(path.join(dir, "node_modules", "@types"), { recursive: true })
    fs.symlinkSync(root, path.join(dir, "node_modules", "worksync"))
    fs.symlinkSync(path.join(root, "node_modules", "effect"), path.join(dir, "node_modules", "effect"))
    fs.symlinkSync(path.join(root, "node_modules", "@types", "node"), path.join(dir, "node_modules", "@types", "node"))
    fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ type: "module" }))
    // A plain strict project: no allowImportingTsExtensions, no exactOptionalPropertyTypes.
    fs.writeFileSync(
      path.join(dir, "tsconfig.json"),
      JSON.stringify({ compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, skipLibCheck: true, noEmit: true } })
    )
    fs.writeFileSync(
      path.join(dir, "main.ts"),
      `import { clientLayer, Journal, planCsvImport } from "worksync"
import { startEmulator } from "worksync/emulator"
import { connect } from "worksync/promise"
import * as Effect from "effect/Effect"

const journalFile: Effect.Effect<string, unknown, never> = Effect.gen(function*() {
  return (yield* Journal).file
}).pipe(Effect.provide(Journal.layer("journal.sqlite")))

export const main = async () => {
  const emulator = await startEmulator({ seed: "empty" })
  const ws = await connect({ restUrl: emulator.restUrl, baseUrl: emulator.baseUrl, token: emulator.token, org: emulator.org })
  return [journalFile, clientLayer, planCsvImport, ws] as const
}

// @ts-expect-error Journal.layer gives a Layer, not a number: the declarations carry real types
export const wrong: number = Journal.layer("x")
`
    )
    const tsc = path.join(root, "node_modules", "typescript", "bin", "tsc")
    const r = spawnSync(process.execPath, [tsc, "-p", dir], { encoding: "utf8", timeout: 60_000 })
    expect(r.stdout + r.stderr).toBe("")
    expect(r.status).toBe(0)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}, 60_000)
