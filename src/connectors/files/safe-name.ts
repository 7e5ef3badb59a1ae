/**
 * Safe local file names for server-supplied names.
 *
 * A server name is arbitrary text: it may hold `/`, `\`, `..`, control characters,
 * Windows device names or thousands of bytes. A local name made here is one path
 * component that stays inside its directory on Linux, macOS and Windows alike, keeps
 * unicode (NFC-normalized), and fits in the 255-byte limit of common filesystems.
 * Collisions, including case-only ones (case-insensitive filesystems), are resolved
 * deterministically by a `SafeNamer` that remembers what it already handed out.
 */
import * as path from "node:path"

/** Bytes allowed for the name before a collision suffix (255 minus room for ` (99999)`). */
export const MAX_NAME_BYTES = 240

/** Names the copy itself uses inside a target directory; server files never get them. */
export const MANIFEST_FILE = "manifest.ndjson"
export const TEMP_DIR = ".worksync-tmp"

/**
 * Windows device names, reserved with or without an extension (`con.txt` too); COM and LPT
 * take the superscript digits one, two and three as well. Written as escapes: the CLI
 * bundle stays ASCII (see scripts/build.mjs).
 */
const RESERVED_DEVICE = /^(con|prn|aux|nul|com[0-9\u00b9\u00b2\u00b3]|lpt[0-9\u00b9\u00b2\u00b3]|conin\$|conout\$)$/i

/** Separators, characters Windows refuses, and C0/C1 controls and DEL. */
// eslint-disable-next-line no-control-regex
const UNSAFE_CHARS = /[/\\<>:"|?*\u0000-\u001f\u007f-\u009f]/g

const utf8Length = (s: string): number => Buffer.byteLength(s, "utf8")

/** Cuts `s` to at most `maxBytes` UTF-8 bytes without splitting a code point. */
export const truncateUtf8 = (s: string, maxBytes: number): string => {
  if (utf8Length(s) <= maxBytes) return s
  let out = ""
  let bytes = 0
  for (const ch of s) {
    const n = utf8Length(ch)
    if (bytes + n > maxBytes) break
    out += ch
    bytes += n
  }
  return out
}

/** Splits `name` into stem and extension (with its dot); a leading dot is not an extension. */
export const splitExtension = (name: string): { stem: string; ext: string } => {
  const dot = name.lastIndexOf(".")
  if (dot <= 0 || dot === name.length - 1) return { stem: name, ext: "" }
  const ext = name.slice(dot)
  // A long "extension" is really part of the name; keep it with the stem.
  if (utf8Length(ext) > 32) return { stem: name, ext: "" }
  return { stem: name.slice(0, dot), ext }
}

/**
 * One safe path component for `serverName` (no collision handling): separators and
 * unsafe characters become `_`, trailing dots and spaces go, `.` and `..` and device
 * names are prefixed, and the result fits `MAX_NAME_BYTES` with its extension kept.
 */
export const safeLocalName = (serverName: string): string => {
  let name = serverName.normalize("NFC").replace(UNSAFE_CHARS, "_")
  // Windows drops trailing dots and spaces, which would make two names one.
  name = name.replace(/[. ]+$/, "")
  // Nothing left (empty, ".", "..", "...."): a placeholder, never a path step.
  if (name === "") name = "_file"
  const { stem, ext } = splitExtension(name)
  const base = stem.split(".")[0] ?? stem
  let safeStem = RESERVED_DEVICE.test(base.trim()) ? `_${stem}` : stem
  const extBytes = utf8Length(ext)
  if (utf8Length(safeStem) + extBytes > MAX_NAME_BYTES) {
    safeStem = truncateUtf8(safeStem, MAX_NAME_BYTES - extBytes).replace(/[. ]+$/, "")
    if (safeStem === "") safeStem = "_"
  }
  return safeStem + ext
}

/** The key two names collide under: case-folded, NFC (case-insensitive filesystems). */
export const collisionKey = (name: string): string => name.normalize("NFC").toLowerCase()

/**
 * Hands out unique safe names. The first name asked for gets the plain safe name; a
 * later one that collides gets ` (2)`, ` (3)`, ... before its extension. Names already
 * on record (from a journal of an earlier run) are reserved first, so a rerun gives
 * every file the name it had.
 */
export class SafeNamer {
  private readonly taken = new Set<string>([collisionKey(MANIFEST_FILE), collisionKey(TEMP_DIR)])

  /** Marks a name as used (e.g. one recorded by an earlier run). */
  reserve(localName: string): void {
    this.taken.add(collisionKey(localName))
  }

  isTaken(localName: string): boolean {
    return this.taken.has(collisionKey(localName))
  }

  /** A safe name for `serverName` that no earlier call returned or reserved. */
  next(serverName: string): string {
    const first = safeLocalName(serverName)
    if (!this.isTaken(first)) {
      this.reserve(first)
      return first
    }
    const { stem, ext } = splitExtension(first)
    for (let n = 2; ; n++) {
      const candidate = `${stem} (${n})${ext}`
      if (!this.isTaken(candidate)) {
        this.reserve(candidate)
        return candidate
      }
    }
  }
}

/**
 * The absolute path of `localName` inside `root`, or null when it would not be a direct
 * child of `root` (the last guard before any write).
 */
export const resolveInside = (root: string, localName: string): string | null => {
  const absRoot = path.resolve(root)
  const full = path.resolve(absRoot, localName)
  const rel = path.relative(absRoot, full)
  // A direct child: one component, not `.` or `..` (names like `..foo` are fine).
  if (rel === "" || rel === "." || rel === ".." || path.isAbsolute(rel) || rel.includes(path.sep) || rel.includes("/")) {
    return null
  }
  return full
}

/** What the presigned flow accepts as an extension: 1-16 letters or digits after a dot that is not first. */
const UPLOAD_EXTENSION = /^[A-Za-z0-9]{1,16}$/

export const hasUploadExtension = (name: string): boolean => {
  const dot = name.lastIndexOf(".")
  const slash = name.lastIndexOf("/")
  if (dot <= slash + 1) return false
  return UPLOAD_EXTENSION.test(name.slice(dot + 1))
}

/** Appended to names the presign step would refuse for lack of an extension. */
export const FALLBACK_EXTENSION = "bin"

/**
 * The name a file is uploaded under: its name as is when it has an extension the
 * presign step can read (R-UPLOAD-PRESIGN-20), else the name plus `.bin`.
 */
export const uploadNameFor = (name: string): string =>
  hasUploadExtension(name) ? name : `${name}.${FALLBACK_EXTENSION}`
