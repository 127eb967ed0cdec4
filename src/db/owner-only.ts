import fs from 'node:fs'
import path from 'node:path'

// Owner-only files under the bank's data directory (the policy is explained in
// src/data-dir.ts): the modes, and the walk that strips group and other bits from what is
// already there. openDatabase tightens the embedded store with it after every open.

/** Folders the bank makes under its data directory. */
export const owner_only_dir_mode = 0o700
/** Files the bank writes under its data directory. */
export const owner_only_file_mode = 0o600
/** The bits no one but the owner may have. */
export const group_and_other_bits = 0o077
/** Entries a tightening walk visits at most: a data directory is a few thousand files. */
const tighten_entries_max = 1_000_000

/**
 * Removes group and other permissions from `root` and everything under it; symbolic links
 * under it are neither followed nor changed (their target may be anywhere; `root` itself
 * may be one). Returns the paths whose
 * mode changed. An entry that vanishes while the walk runs is skipped; any other failure
 * (a file of another user: EPERM) is thrown with the path, for the bank must not serve
 * from a data directory it cannot keep to itself.
 */
export function tightenTree(root: string): string[] {
  const tightened: string[] = []
  const pending = [root]
  let visited = 0
  while (pending.length > 0) {
    const entry = pending.pop()!
    visited += 1
    if (visited > tighten_entries_max)
      throw new Error(
        `${root} holds more than ${tighten_entries_max} entries; not a data directory of this ` +
          `bank?`,
      )
    const stat = statOrUndefined(entry, entry !== root)
    if (!stat || stat.isSymbolicLink()) continue
    if ((stat.mode & group_and_other_bits) !== 0) {
      chmodOrThrow(entry, stat.mode & 0o7777 & ~group_and_other_bits)
      tightened.push(entry)
    }
    if (stat.isDirectory())
      for (const name of readdirOrEmpty(entry)) pending.push(path.join(entry, name))
  }
  return tightened
}

// A file that vanishes during the walk (the database removes files while it runs) is skipped.
function statOrUndefined(entry: string, ofLink: boolean): fs.Stats | undefined {
  try {
    return ofLink ? fs.lstatSync(entry) : fs.statSync(entry)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
}

function readdirOrEmpty(dir: string): string[] {
  try {
    return fs.readdirSync(dir)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
}

function chmodOrThrow(entry: string, mode: number): void {
  try {
    fs.chmodSync(entry, mode)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return
    throw new Error(
      `cannot make ${entry} owner-only (${code ?? String(error)}): the data directory must ` +
        `belong to the user the bank runs as`,
    )
  }
}
