import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { resolveVariant, VARIANT_ENV } from "../../src/emulator/index.ts"
import { Emulator, emulatorLayer } from "../support/effect.ts"

describe("emulator variant option", () => {
  it("the option wins over the environment; without either the variant is reference", () => {
    expect(resolveVariant(undefined, {})).toBe("reference")
    expect(resolveVariant(undefined, { [VARIANT_ENV]: "alt" })).toBe("alt")
    expect(resolveVariant("reference", { [VARIANT_ENV]: "alt" })).toBe("reference")
    expect(resolveVariant("alt", {})).toBe("alt")
    expect(resolveVariant(undefined, { [VARIANT_ENV]: "" })).toBe("reference")
  })

  it("an unknown value is an error naming the accepted ones", () => {
    expect(() => resolveVariant(undefined, { [VARIANT_ENV]: "bogus" })).toThrow(
      "Invalid emulator WORKSYNC_EMULATOR_VARIANT=bogus: use reference or alt"
    )
    expect(() => resolveVariant("bogus" as never, {})).toThrow('Invalid emulator variant "bogus"')
  })

  // The emulator (started by emulatorLayer with startEmulator) is closed when the test's scope closes.
  it.live("startEmulator({ variant }) serves that variant", () =>
    Effect.gen(function* () {
      const h = yield* Effect.map(Layer.build(emulatorLayer({ variant: "alt" })), Context.get(Emulator))
      expect(h.variant).toBe("alt")
      expect(h.ctx.variant).toBe("alt")
    }))
})
