import { afterEach, describe, expect, it } from "vitest"
import { resolveVariant, startEmulator, VARIANT_ENV, type EmulatorHandle } from "../../src/emulator/index.ts"

describe("emulator variant option", () => {
  let h: EmulatorHandle | undefined
  afterEach(async () => {
    await h?.close()
    h = undefined
  })

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

  it("startEmulator({ variant }) serves that variant", async () => {
    h = await startEmulator({ variant: "alt" })
    expect(h.variant).toBe("alt")
    expect(h.ctx.variant).toBe("alt")
  })
})
