import ssh2, { type Client as SshClient, type SFTPWrapper } from 'ssh2'
import { hostKeyFingerprint, type SftpAddress } from './sftp-settings.ts'

// ssh2 is CommonJS: its exports are read from the default export.
const { Client, utils } = ssh2

// One SSH connection to the clearing house's SFTP server, and the few SFTP requests the
// carrier (sftp-carrier.ts) makes on it, as promises. Built on ssh2 (mscdex/ssh2, pure
// JavaScript), whose SFTP client speaks OpenSSH's extensions: posix-rename@openssh.com (a
// rename that replaces, so a file uploaded again replaces the first copy) and
// fsync@openssh.com (the upload is on the server's disk before it gets its real name).
//
// Every wait is bounded: the TCP connection and the SSH handshake (connect_timeout_ms), each
// request (request_timeout_ms: past it the connection is dropped, which fails every request
// still waiting), and a server that stops answering at all (SSH keepalives). The host key
// must be one of the fingerprints given, before the bank offers its key or sends anything.

/** Where to connect and as whom: the address, the bank's key, the host keys it trusts. */
export interface SftpTarget extends SftpAddress {
  /** The bank's private key (OpenSSH or PEM format, without a passphrase). Never logged. */
  privateKey: Buffer
  /** The server's host key fingerprints (`SHA256:…`) the bank trusts; any other is refused. */
  hostKeys: readonly string[]
}

export interface SftpSessionLimits {
  /** The TCP connection, the SSH handshake and logging in, together. */
  connect_timeout_ms: number
  /** One SFTP request (a read or write of a chunk, a rename, a listing). */
  request_timeout_ms: number
  /** How often a quiet connection is checked; three unanswered checks drop it. */
  keepalive_interval_ms: number
}

/** A failure of the connection or of a request, in words that say which. */
export class SftpError extends Error {
  constructor(message: string, readonly code?: number | string) {
    super(message)
  }
}

/** SFTP's status for a path that does not exist (SSH_FX_NO_SUCH_FILE). */
export const no_such_file = 2

/** A file in a remote folder's listing. */
export interface RemoteEntry {
  name: string
  size: number
  /** Seconds since the epoch, as the server keeps it. */
  mtime: number
  isFile: boolean
}

/**
 * Checks the bank's private key as read from its file: a private key of a kind SSH uses, with
 * no passphrase. Answers what is wrong with it, or undefined. Never repeats the key.
 */
export function privateKeyProblem(key: Buffer): string | undefined {
  const parsed = utils.parseKey(key)
  if (parsed instanceof Error) return `not a private key the bank can use (${parsed.message})`
  const first = Array.isArray(parsed) ? (parsed as unknown[])[0] : parsed
  if (!first || !(first as { isPrivateKey(): boolean }).isPrivateKey()) {
    return 'holds a public key: give the private key (the file without .pub)'
  }
  return undefined
}

export class SftpSession {
  private failure: Error | undefined

  private constructor(
    private readonly client: SshClient,
    private readonly sftp: SFTPWrapper,
    private readonly limits: SftpSessionLimits,
  ) {
    // A connection that breaks later fails the requests waiting on it (ssh2 calls them back);
    // these keep the error for the next request, and keep it from being an unhandled event.
    client.on('error', (error: Error) => { this.failure ??= error })
    client.on('close', () => { this.failure ??= new SftpError('the connection was closed') })
    sftp.on('error', (error: Error) => { this.failure ??= error })
  }

  /** Connects, checks the host key, logs in with the key and starts SFTP. */
  static open(target: SftpTarget, limits: SftpSessionLimits): Promise<SftpSession> {
    const client = new Client()
    let offered: string | undefined
    return new Promise<SftpSession>((resolve, reject) => {
      const timer = setTimeout(() => {
        fail(new SftpError(`no SSH session within ${limits.connect_timeout_ms} ms`))
      }, limits.connect_timeout_ms)
      const fail = (error: Error) => {
        clearTimeout(timer)
        client.destroy()
        reject(error)
      }
      client.on('error', (error: Error & { level?: string }) => {
        if (offered !== undefined && !target.hostKeys.includes(offered)) {
          fail(new SftpError(`the server offered host key ${offered}, which is not ` +
            'BANK_RAIL_SFTP_HOST_KEY: refused, nothing sent', 'host-key'))
          return
        }
        fail(new SftpError(error.level === 'client-authentication'
          ? `the server refused the bank's key for user ${target.username} (${error.message})`
          : error.message, error.level ?? (error as { code?: string }).code))
      })
      client.on('close', () => fail(new SftpError('the server closed the connection')))
      client.on('ready', () => {
        client.sftp((error, sftp) => {
          if (error) return fail(new SftpError(`no SFTP on the server: ${error.message}`))
          clearTimeout(timer)
          client.removeAllListeners('error').removeAllListeners('close')
          resolve(new SftpSession(client, sftp, limits))
        })
      })
      client.connect({
        host: target.host, port: target.port, username: target.username,
        privateKey: target.privateKey,
        hostVerifier: (key: Buffer) => {
          offered = hostKeyFingerprint(key)
          return target.hostKeys.includes(offered)
        },
        readyTimeout: limits.connect_timeout_ms,
        keepaliveInterval: limits.keepalive_interval_ms,
        keepaliveCountMax: 3,
        // Only the key: no password, no agent, no keyboard-interactive prompt to hang on.
        tryKeyboard: false,
      })
    })
  }

  /** The folder's entries (not `.` and `..`). */
  list(dir: string): Promise<RemoteEntry[]> {
    return this.request(`list ${dir}`, (done) => this.sftp.readdir(dir, (error, list) =>
      done(error, list?.map((entry) => ({ name: entry.filename, size: entry.attrs.size,
        mtime: entry.attrs.mtime, isFile: entry.attrs.isFile() })))))
  }

  open(file: string, flags: 'r' | 'w'): Promise<Buffer> {
    return this.request(`open ${file}`, (done) => this.sftp.open(file, flags, done))
  }

  close(handle: Buffer): Promise<void> {
    return this.request('close', (done) => this.sftp.close(handle, done))
  }

  /** Reads up to `length` bytes at `position` into `buffer`; 0 at the end of the file. */
  read(handle: Buffer, buffer: Buffer, length: number, position: number): Promise<number> {
    return this.request('read', (done) =>
      this.sftp.read(handle, buffer, 0, length, position, (error, bytes) => done(error, bytes)))
  }

  write(handle: Buffer, buffer: Buffer, length: number, position: number): Promise<void> {
    return this.request('write', (done) =>
      this.sftp.write(handle, buffer, 0, length, position, done))
  }

  size(handle: Buffer): Promise<number> {
    return this.request('fstat', (done) =>
      this.sftp.fstat(handle, (error, stats) => done(error, stats?.size)))
  }

  /** Flushes the file to the server's disk (fsync@openssh.com); a no-op where not offered. */
  fsync(handle: Buffer): Promise<void> {
    return this.request('fsync', (done) => {
      try {
        this.sftp.ext_openssh_fsync(handle, (error) => done(error))
      } catch {
        // The server does not offer the extension: its rename is all there is.
        done(undefined)
      }
    })
  }

  /**
   * Renames, replacing a file of the new name (posix-rename@openssh.com); where the server
   * does not offer it, SFTP's own rename, which fails when the new name is taken.
   */
  rename(from: string, to: string): Promise<void> {
    return this.request(`rename ${from} to ${to}`, (done) => {
      try {
        this.sftp.ext_openssh_rename(from, to, done)
      } catch {
        this.sftp.rename(from, to, done)
      }
    })
  }

  unlink(file: string): Promise<void> {
    return this.request(`remove ${file}`, (done) => this.sftp.unlink(file, done))
  }

  /** Ends the connection (what is still waiting fails). */
  end(): void {
    this.failure ??= new SftpError('the session has ended')
    this.client.end()
  }

  /** One request, bounded in time; a failed connection fails it at once. */
  private request<T = void>(what: string,
      send: (done: (error: Error | undefined | null, value?: T) => void) => void): Promise<T> {
    if (this.failure) {
      return Promise.reject(new SftpError(`${what}: ${this.failure.message}`))
    }
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.failure ??= new SftpError(`no answer within ${this.limits.request_timeout_ms} ms`)
        this.client.destroy()
        reject(new SftpError(`${what}: no answer within ${this.limits.request_timeout_ms} ms`))
      }, this.limits.request_timeout_ms)
      send((error, value) => {
        clearTimeout(timer)
        if (error) {
          const code = (error as { code?: number | string }).code
          reject(new SftpError(`${what}: ${error.message}`, code))
        } else resolve(value as T)
      })
    })
  }
}
