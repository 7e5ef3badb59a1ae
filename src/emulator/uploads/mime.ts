/**
 * MIME type and extension from a filename, as the presigned flow derives them
 * (R-UPLOAD-PRESIGN-02). An extension we do not know still uploads, as
 * `application/octet-stream`; a name without a usable extension is refused.
 */

const MIME_BY_EXTENSION: Readonly<Record<string, string>> = {
  // images
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  svg: "image/svg+xml",
  bmp: "image/bmp",
  ico: "image/x-icon",
  tif: "image/tiff",
  tiff: "image/tiff",
  heic: "image/heic",
  avif: "image/avif",
  // documents
  pdf: "application/pdf",
  txt: "text/plain",
  md: "text/markdown",
  csv: "text/csv",
  tsv: "text/tab-separated-values",
  html: "text/html",
  htm: "text/html",
  css: "text/css",
  xml: "application/xml",
  json: "application/json",
  ndjson: "application/x-ndjson",
  rtf: "application/rtf",
  doc: "application/msword",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xls: "application/vnd.ms-excel",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  ppt: "application/vnd.ms-powerpoint",
  pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
  odt: "application/vnd.oasis.opendocument.text",
  ods: "application/vnd.oasis.opendocument.spreadsheet",
  odp: "application/vnd.oasis.opendocument.presentation",
  // code and data
  js: "text/javascript",
  mjs: "text/javascript",
  ts: "text/plain",
  yaml: "application/yaml",
  yml: "application/yaml",
  sql: "application/sql",
  // archives
  zip: "application/zip",
  gz: "application/gzip",
  tgz: "application/gzip",
  tar: "application/x-tar",
  bz2: "application/x-bzip2",
  xz: "application/x-xz",
  "7z": "application/x-7z-compressed",
  rar: "application/vnd.rar",
  // media
  mp3: "audio/mpeg",
  wav: "audio/wav",
  ogg: "audio/ogg",
  m4a: "audio/mp4",
  mp4: "video/mp4",
  mov: "video/quicktime",
  webm: "video/webm",
  avi: "video/x-msvideo",
  mkv: "video/x-matroska",
  // other
  bin: "application/octet-stream",
  dat: "application/octet-stream",
  ics: "text/calendar",
  eml: "message/rfc822"
}

export const FALLBACK_MIME = "application/octet-stream"

/** Extensions are letters and digits only; anything else is not an extension. */
const EXTENSION = /^[A-Za-z0-9]{1,16}$/

/**
 * The extension (lowercase, no leading dot) of `filename`, or null when it has none:
 * no dot, a dot only in first position (`.env`), or an empty or odd tail (`a.`, `a.b c`).
 */
export const extensionOf = (filename: string): string | null => {
  const dot = filename.lastIndexOf(".")
  if (dot <= 0) return null
  const tail = filename.slice(dot + 1)
  return EXTENSION.test(tail) ? tail.toLowerCase() : null
}

export const mimeOf = (extension: string): string => MIME_BY_EXTENSION[extension.toLowerCase()] ?? FALLBACK_MIME

export const isImageMime = (mime: string): boolean => mime.startsWith("image/")

/** Both derived values, or null when the extension cannot be determined. */
export const typeOfFilename = (filename: string): { extension: string; type: string } | null => {
  const extension = extensionOf(filename)
  return extension === null ? null : { extension, type: mimeOf(extension) }
}
