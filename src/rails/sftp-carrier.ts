import { readFileSync } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import type { RailSftpConfig } from '../config.ts'
import type { Logger } from '../logger.ts'
import { read_limits } from './iso20022/xml-read.ts'
import { syncFolder, temporaryName, type RailFolder } from './rail-folder.ts'
import {
  no_such_file, privateKeyProblem, SftpError, SftpSession, type RemoteEntry,
  type SftpSessionLimits, type SftpTarget,
} from './sftp-session.ts'

// The rail's SFTP carrier (BANK_RAIL_SFTP_URL; docs/operators/rails.md, "SFTP"): it moves
// files between the bank's rail folder (BANK_RAIL_DIR, still the bank's working copy: the
// rail writes and reads only there) and the clearing house's SFTP server, the way
// host-to-host links run. Folders, named from each side's own point of view:
//
//   bank: outbound/   →  server: <root>/inbound/    the bank's pacs.008 and pacs.004
//   bank: inbound/    ←  server: <root>/outbound/   the clearing house's answers
//   bank: outbound/sent/                            what was uploaded, kept
//
// Up: each file is written on the server under a dot name, flushed to its disk
// (fsync@openssh.com), checked for its size, then renamed to its real name with
// posix-rename@openssh.com (which replaces a copy of the same name); only then is the local
// file moved to outbound/sent/. Down: each `*.xml` (not a dot file) is read into a dot file in
// the bank's inbound/, flushed, renamed and its folder flushed, as RailFolder.write does; only
// then is it removed from the server. So a crash at any point loses no file, and at worst
// carries one twice: the clearing house must take a repeated file as the repeat it is, and
// the bank applies a message id once (a byte-identical repeat is only archived).
//
// A pass runs around each pass over the folder (IsoRail.exchange): up and down, then the
// pass, then up again (the returns the pass wrote). Any failure (no connection, a host key
// that is not the one given, a request that fails) fails the pass with an SftpCarryError
// that says what failed; the pass over the local folder still runs, the job is retried, and
// the next pass starts afresh on a new connection. Passes never overlap: the jobs that run
// them share one exclusive group (rail.eft) across instances, and one carrier runs one pass
// at a time.

/** What carries the rail folder's files to and from the clearing house around a pass. */
export interface RailCarrier {
  /** Carries, runs the pass, carries what the pass wrote; fails after the pass if carrying did. */
  around<T>(pass: () => Promise<T>): Promise<T>
}

export interface SftpCarrierLimits extends SftpSessionLimits {
  /**
   * The largest answer downloaded: the readers refuse a message over
   * read_limits.message_bytes_max anyway, so a larger file is left on the server (logged), and
   * a download is stopped once it passes this.
   */
  file_bytes_max: number
  /** Files carried each way in one pass; the rest go in the next. */
  files_per_pass_max: number
  /** Bytes of one read or write request. */
  chunk_bytes: number
}

export const sftp_carrier_limits: SftpCarrierLimits = {
  connect_timeout_ms: 20_000,
  request_timeout_ms: 60_000,
  keepalive_interval_ms: 10_000,
  file_bytes_max: read_limits.message_bytes_max + 1024 * 1024,
  files_per_pass_max: 1000,
  chunk_bytes: 128 * 1024,
}

/** What one pass carried. */
export interface CarryReport {
  uploaded: number
  downloaded: number
  /** Answers over file_bytes_max, left on the server. */
  too_large: number
}

/** A pass that could not carry: what failed, and where. */
export class SftpCarryError extends Error {}

/** The message files a folder holds: not dot files, `.xml`. */
const message_file = /^[^.].*\.xml$/

export class SftpCarrier implements RailCarrier {
  /** Where an uploaded file goes: the bank's record of what it handed over. */
  readonly sent: string
  private readonly remoteInbound: string
  private readonly remoteOutbound: string
  private running: Promise<unknown> = Promise.resolve()

  constructor(
    private readonly folder: RailFolder,
    private readonly target: SftpTarget,
    private readonly log: Logger,
    private readonly limits: SftpCarrierLimits = sftp_carrier_limits,
  ) {
    this.sent = path.join(folder.outbound, 'sent')
    this.remoteInbound = path.posix.join(target.root, 'inbound')
    this.remoteOutbound = path.posix.join(target.root, 'outbound')
  }

  /** Who and where, for logs and errors (never the key). */
  get server(): string {
    return `${this.target.username}@${this.target.host}:${this.target.port}`
  }

  around<T>(pass: () => Promise<T>): Promise<T> {
    return this.serial(async () => {
      const session = await this.connect().catch((error: unknown) => error as Error)
      const before = session instanceof Error ? session
        : await this.both(session).then(() => undefined, (error: unknown) => error as Error)
      try {
        const result = await pass()
        if (before) throw before
        await this.upload(session as SftpSession)
        return result
      } finally {
        if (!(session instanceof Error)) session.end()
      }
    })
  }

  /** One pass on its own: up, then down. */
  carry(): Promise<CarryReport> {
    return this.serial(async () => {
      const session = await this.connect()
      try {
        return await this.both(session)
      } finally {
        session.end()
      }
    })
  }

  /** One pass at a time in this process (a second waits for the first). */
  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.running.then(work, work)
    this.running = next.catch(() => undefined)
    return next
  }

  private async connect(): Promise<SftpSession> {
    try {
      return await SftpSession.open(this.target, this.limits)
    } catch (error) {
      throw this.failed('connecting', error)
    }
  }

  private async both(session: SftpSession): Promise<CarryReport> {
    const uploaded = await this.upload(session)
    const { downloaded, too_large } = await this.download(session)
    const report = { uploaded, downloaded, too_large }
    if (uploaded + downloaded > 0) {
      this.log.info({ server: this.server, ...report }, 'rail SFTP: files carried')
    }
    return report
  }

  /** Uploads every file waiting in outbound/, oldest name first; answers how many. */
  private async upload(session: SftpSession): Promise<number> {
    const names = (await this.folder.list(this.folder.outbound))
      .slice(0, this.limits.files_per_pass_max)
    if (names.length > 0) await fs.mkdir(this.sent, { recursive: true, mode: 0o750 })
    for (const name of names) {
      try {
        await this.uploadOne(session, name)
      } catch (error) {
        throw this.failed(`uploading ${name}`, error)
      }
      // Handed over: out of outbound/ so the next pass does not send it again.
      await fs.rename(path.join(this.folder.outbound, name), path.join(this.sent, name))
      await syncFolder(this.sent)
      await syncFolder(this.folder.outbound)
    }
    return names.length
  }

  private async uploadOne(session: SftpSession, name: string): Promise<void> {
    const temporary = path.posix.join(this.remoteInbound, temporaryName(name))
    const local = await fs.open(path.join(this.folder.outbound, name), 'r')
    try {
      const handle = await session.open(temporary, 'w')
      let written = 0
      try {
        const buffer = Buffer.allocUnsafe(this.limits.chunk_bytes)
        for (;;) {
          const { bytesRead } = await local.read(buffer, 0, buffer.length, written)
          if (bytesRead === 0) break
          await session.write(handle, buffer, bytesRead, written)
          written += bytesRead
        }
        await session.fsync(handle)
        const size = await session.size(handle)
        if (size !== written) {
          throw new SftpError(`the server holds ${size} bytes of the ${written} written`)
        }
      } finally {
        await session.close(handle)
      }
    } catch (error) {
      // Best effort: a dot file the clearing house skips anyway.
      await session.unlink(temporary).catch(() => undefined)
      throw error
    } finally {
      await local.close()
    }
    await session.rename(temporary, path.posix.join(this.remoteInbound, name))
  }

  /** Downloads every answer waiting on the server, in the order it arrived. */
  private async download(session: SftpSession): Promise<Omit<CarryReport, 'uploaded'>> {
    let entries: RemoteEntry[]
    try {
      entries = (await session.list(this.remoteOutbound))
        .filter((entry) => entry.isFile && message_file.test(entry.name))
        .sort((a, b) => a.mtime - b.mtime || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
        .slice(0, this.limits.files_per_pass_max)
    } catch (error) {
      throw this.failed(`listing ${this.remoteOutbound}`, error)
    }
    await this.folder.ensure()
    let downloaded = 0
    let too_large = 0
    for (const entry of entries) {
      const remote = path.posix.join(this.remoteOutbound, entry.name)
      const done = await this.downloadOne(session, remote, entry).catch((error: unknown) => {
        throw this.failed(`downloading ${entry.name}`, error)
      })
      if (done) downloaded++
      else too_large++
    }
    return { downloaded, too_large }
  }

  /** False when the file is over the bound: it stays on the server. */
  private async downloadOne(session: SftpSession, remote: string,
      entry: RemoteEntry): Promise<boolean> {
    if (entry.size > this.limits.file_bytes_max) return this.tooLarge(entry.name, entry.size)
    const temporary = path.join(this.folder.inbound, temporaryName(entry.name))
    const handle = await session.open(remote, 'r')
    const local = await fs.open(temporary, 'wx', 0o640)
    let whole = false
    try {
      let read = 0
      const buffer = Buffer.allocUnsafe(this.limits.chunk_bytes)
      for (;;) {
        const bytes = await session.read(handle, buffer, buffer.length, read)
        if (bytes === 0) break
        read += bytes
        // Grown past the bound since it was listed: left on the server like any larger file.
        if (read > this.limits.file_bytes_max) return this.tooLarge(entry.name, read)
        await local.write(buffer, 0, bytes)
      }
      await local.sync()
      whole = true
    } finally {
      await local.close()
      if (!whole) await fs.rm(temporary, { force: true })
      await session.close(handle).catch(() => undefined)
    }
    await fs.rename(temporary, path.join(this.folder.inbound, entry.name))
    await syncFolder(this.folder.inbound)
    // Only once the bank holds it on disk: gone already (taken by hand) is as good.
    await session.unlink(remote).catch((error: unknown) => {
      if (!(error instanceof SftpError && error.code === no_such_file)) throw error
    })
    return true
  }

  private tooLarge(name: string, size: number): false {
    this.log.warn({ server: this.server, file: name, size, bytes_max: this.limits.file_bytes_max },
      'rail SFTP: an answer larger than the bound is left on the server')
    return false
  }

  private failed(step: string, error: unknown): SftpCarryError {
    if (error instanceof SftpCarryError) return error
    const cause = error instanceof Error ? error.message : String(error)
    const failure = new SftpCarryError(`rail SFTP (${this.server}): ${step} failed: ${cause}`)
    this.log.warn({ server: this.server, step, err: cause }, 'rail SFTP: the pass failed')
    return failure
  }
}

/**
 * The server to carry to, with the bank's private key read from its file now (at start): a
 * file that cannot be read, or holds no usable private key, stops the start, naming the
 * setting and the file but never repeating what it holds.
 */
export function readSftpTarget(config: RailSftpConfig): SftpTarget {
  let privateKey: Buffer
  try {
    privateKey = readFileSync(config.keyFile)
  } catch (error) {
    throw new Error(`invalid configuration: BANK_RAIL_SFTP_KEY_FILE (${config.keyFile}) ` +
      `cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`)
  }
  const problem = privateKeyProblem(privateKey)
  if (problem !== undefined) {
    throw new Error(`invalid configuration: BANK_RAIL_SFTP_KEY_FILE (${config.keyFile}) ` +
      `${problem}; it must be the bank's private key, without a passphrase`)
  }
  return { ...config.address, privateKey, hostKeys: config.hostKeys }
}

