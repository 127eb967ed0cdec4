import fs from 'node:fs'
import { group_and_other_bits, owner_only_dir_mode, tightenTree } from './db/owner-only.ts'

// The bank's data directory (`BANK_DATA_DIR`, `./.data` by default) holds the embedded
// database (with the credential hashes), the secrets key, the operator token and the NATS
// URL: nothing in it is for another local user. Everything in it is owner-only — folders
// 0700, files 0600 — whatever the umask the bank was started under:
//
// - `ownerOnlyProcess()` (main.ts, before anything is created) adds 0o077 to the process
//   umask for the life of the process. PGlite's file system (Emscripten's NODEFS) creates
//   files and folders whenever the database needs one, with modes of its own choosing,
//   through Node's fs, so the umask is the one place that covers every file it makes later;
//   a private nats-server inherits it too.
// - `tightenTree()` strips group and other bits from what is already there: a data
//   directory made by an earlier version under a loose umask, and the files PGlite writes
//   with explicit modes (it unpacks a new store's files as 0666, and rewrites
//   `pg_internal.init` as 0644 each time it opens, whatever the umask). openDatabase calls
//   it on the store after every open.
// - Every mkdir and write of the bank under the data directory names its mode (0700/0600)
//   too, so a process that is not main.ts (a test, the CLI) writes the same.
//
// The modes and the tightening walk live in src/db/owner-only.ts, since openDatabase uses
// them and db/ imports nothing of the rest of src/.

export { owner_only_dir_mode, owner_only_file_mode, tightenTree } from './db/owner-only.ts'

/** Adds group and other to the process umask (kept for the life of the process). */
export function ownerOnlyProcess(): void {
  const previous = process.umask(group_and_other_bits)
  process.umask(previous | group_and_other_bits)
}

/**
 * Makes `dir` (0700) when missing and tightens it and everything already under it. Returns
 * the entries whose modes were tightened (none on a data directory made by this version).
 */
export function ownerOnlyDataDir(dir: string): string[] {
  fs.mkdirSync(dir, { recursive: true, mode: owner_only_dir_mode })
  return tightenTree(dir)
}

