import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'

// The folders the bank and the clearing house exchange files through (BANK_RAIL_DIR): the
// bank writes its messages into `outbound/`, the clearing house's answers arrive in
// `inbound/`, and what the bank applied is moved to `archive/` (what it refused whole, to
// `archive/refused/`). A file appears in a folder whole or not at all: it is written under
// a temporary name that starts with a dot (which readers skip), flushed to disk, then
// renamed, and the folder itself flushed, so a crash leaves either nothing or the whole file.

/** The message files of a folder: not temporary (dot) files, in name order. */
const message_file = /^[^.].*\.xml$/

/** A temporary file of `write`: a dot, the file's name, random hex digits, `.tmp`. */
const temporary_file = /^\..+\.xml\.[0-9a-f]{12}\.tmp$/

/**
 * A temporary file older than this was left by a writer that died mid-write (kill -9, a
 * crash): the first `ensure` of a process removes it from outbound/ and inbound/. A younger
 * one may be a write still going on in another instance, which shares the folders.
 */
export const stale_temporary_ms = 60 * 60_000

export class RailFolder {
  readonly outbound: string
  readonly inbound: string
  readonly archive: string
  readonly refused: string

  constructor(readonly root: string) {
    this.outbound = path.join(root, 'outbound')
    this.inbound = path.join(root, 'inbound')
    this.archive = path.join(root, 'archive')
    this.refused = path.join(this.archive, 'refused')
  }

  private made: Promise<void> | undefined

  /**
   * Makes the folders once: owner only (the bank's umask takes group and other off the 0750
   * asked for here), since payment files name customers.
   */
  ensure(): Promise<void> {
    this.made ??= (async () => {
      for (const dir of [this.outbound, this.inbound, this.archive, this.refused]) {
        await fs.mkdir(dir, { recursive: true, mode: 0o750 })
      }
      for (const dir of [this.outbound, this.inbound]) await removeStaleTemporaries(dir)
    })().catch((error: unknown) => {
      this.made = undefined
      throw error
    })
    return this.made
  }

  /** Writes `name` into `dir` from the chunks, atomically; replaces a file of that name. */
  async write(dir: string, name: string,
      chunks: AsyncIterable<string> | Iterable<string>): Promise<void> {
    checkName(name)
    await this.ensure()
    const temporary = path.join(dir, temporaryName(name))
    const file = await fs.open(temporary, 'wx', 0o640)
    try {
      for await (const chunk of chunks) await file.write(chunk)
      await file.sync()
    } catch (error) {
      await file.close()
      await fs.rm(temporary, { force: true })
      throw error
    }
    await file.close()
    await fs.rename(temporary, path.join(dir, name))
    await syncFolder(dir)
  }

  /** The message files waiting in `dir`, in name order. */
  async list(dir: string): Promise<string[]> {
    await this.ensure()
    const names = await fs.readdir(dir).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [] as string[]
      throw error
    })
    return names.filter((name) => message_file.test(name)).sort()
  }

  /** Moves a file from one folder to another (same file system: a rename), replacing. */
  async move(from: string, name: string, to: string): Promise<void> {
    checkName(name)
    await fs.rename(path.join(from, name), path.join(to, name))
    await syncFolder(to)
  }

  /** When a file was last written (ms since the epoch, with its fraction); 0 when it is gone. */
  async modifiedAt(dir: string, name: string): Promise<number> {
    return fs.stat(path.join(dir, name)).then((stat) => stat.mtimeMs, () => 0)
  }

  async exists(dir: string, name: string): Promise<boolean> {
    return fs.access(path.join(dir, name)).then(() => true, () => false)
  }
}

function checkName(name: string): void {
  if (!message_file.test(name) || name.includes('/') || name.includes('\\')) {
    throw new Error(`not a rail file name: ${JSON.stringify(name)}`)
  }
}

/** Removes the temporary files of `write` in `dir` older than stale_temporary_ms. */
async function removeStaleTemporaries(dir: string): Promise<void> {
  const before = Date.now() - stale_temporary_ms
  for (const name of (await fs.readdir(dir)).filter((n) => temporary_file.test(n))) {
    const file = path.join(dir, name)
    const stat = await fs.stat(file).catch(() => undefined)
    if (stat && stat.mtimeMs < before) await fs.rm(file, { force: true })
  }
}

/** A temporary name readers skip (`temporary_file`): a dot, the name, a random tail. */
export function temporaryName(name: string): string {
  return `.${name}.${randomBytes(6).toString('hex')}.tmp`
}

/** Flushes a folder's entries (a rename is durable only once its folder is). */
export async function syncFolder(dir: string): Promise<void> {
  const handle = await fs.open(dir, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}
