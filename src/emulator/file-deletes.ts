/**
 * Files deleted while a client reads them, driven by the client's progress rather than
 * a clock: "when the download of file M reaches the serving URL (or storage), delete
 * files N...". A user deleting files in the service while a copy runs does exactly this;
 * a deletion placed on a request never depends on timing. Scripted here, applied by the
 * uploads area (uploads/delete-faults.ts) before the request that fires it is answered.
 */

export interface FileDeleteOn {
  /**
   * The request that fires it: a download through the serving URL
   * (`/uploads/{uid}/{name}`), or of the stored object at storage (the signed URL the
   * serving URL redirects to).
   */
  readonly on: "serve" | "storage"
  /** The file whose requests count; every file's when omitted. */
  readonly uid?: string | undefined
  /** The `count`-th counted request fires it (default 1), counted from when it was scripted. */
  readonly count?: number | undefined
  /** The files deleted then. */
  readonly uids: ReadonlyArray<string>
  /**
   * What goes: "file" (default) the row and its stored object, as when a user deletes
   * the file (list-files no longer shows it, its serving URL answers 404, a signed
   * storage URL handed out before answers 404 too); "object" only the stored object
   * (storage lost it: the file is still listed, its serving URL still redirects, storage
   * answers 404).
   */
  readonly what?: "file" | "object" | undefined
}

interface Scripted {
  readonly spec: FileDeleteOn
  seen: number
}

export class FileDeletes {
  private scripted: Array<Scripted> = []

  /** Scripts one deletion; it fires once. */
  script(spec: FileDeleteOn): void {
    this.scripted.push({ spec, seen: 0 })
  }

  /** Deletions scripted and not fired yet. */
  get size(): number {
    return this.scripted.length
  }

  clear(): void {
    this.scripted = []
  }

  /**
   * Counts one download request (`isOf` tells whether it is a request of the file with a
   * given uid) and returns the deletions it fires.
   */
  fire(on: FileDeleteOn["on"], isOf: (uid: string) => boolean): ReadonlyArray<FileDeleteOn> {
    if (this.scripted.length === 0) return []
    const due: Array<FileDeleteOn> = []
    this.scripted = this.scripted.filter((s) => {
      const { spec } = s
      const counted = spec.on === on && (spec.uid === undefined || isOf(spec.uid))
      if (!counted || ++s.seen < (spec.count ?? 1)) return true
      due.push(spec)
      return false
    })
    return due
  }
}
