import { createHash } from 'node:crypto'

// The settings of the rail's SFTP carrier (docs/operators/rails.md, "SFTP"), read without the
// network: the clearing house's server as a URL (BANK_RAIL_SFTP_URL) and the fingerprints of
// its host keys (BANK_RAIL_SFTP_HOST_KEY). config.ts checks them at start; sftp-carrier.ts
// connects with them. The bank's private key (BANK_RAIL_SFTP_KEY_FILE) is read by the carrier.

/** Where the clearing house's SFTP server is, and the folder of the bank's exchange on it. */
export interface SftpAddress {
  host: string
  port: number
  username: string
  /**
   * The remote root, holding the clearing house's `inbound/` (the bank's files go there) and
   * `outbound/` (its answers come from there): absolute, or relative to the login folder.
   */
  root: string
}

/** A fingerprint as `ssh-keygen -l` prints it: SHA-256 of the key, base64 without padding. */
const fingerprint_pattern = /^SHA256:[A-Za-z0-9+/]{43}$/

/**
 * The parts of `sftp://user@host[:port]/remote-root`, or what is wrong with it. The path is the
 * remote root: `/srv/exchange` absolute, `/~/exchange` in the login folder, nothing (or `/`)
 * the server's root (a chrooted account's own folder).
 */
export function parseSftpUrl(value: string): SftpAddress | { problem: string } {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return { problem: 'must be sftp://user@host[:port]/remote-root' }
  }
  if (url.protocol !== 'sftp:') return { problem: 'must start with sftp://' }
  if (url.username === '') return { problem: 'must name the user: sftp://user@host/…' }
  // A password in the URL would end up in process listings and deployment files; the bank
  // logs in with its key (BANK_RAIL_SFTP_KEY_FILE) only.
  if (url.password !== '') {
    return { problem: 'must carry no password: the bank logs in with BANK_RAIL_SFTP_KEY_FILE' }
  }
  if (url.hostname === '') return { problem: 'must name the host: sftp://user@host/…' }
  if (url.search !== '' || url.hash !== '') {
    return { problem: 'must have no query (?…) or fragment (#…)' }
  }
  const pathname = decoded(url.pathname)
  const username = decoded(url.username)
  if (pathname === undefined || username === undefined) {
    return { problem: 'has a % that is not followed by two hex digits' }
  }
  const root = remoteRoot(pathname)
  // The URL parser takes out a plain `..`; an encoded one (%2F..%2F) would climb.
  if (root.split('/').some((part) => part === '..')) {
    return { problem: 'the remote root must not climb with ..' }
  }
  return { host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port: url.port ? Number(url.port) : 22,
    username, root }
}

function decoded(text: string): string | undefined {
  try {
    return decodeURIComponent(text)
  } catch {
    return undefined
  }
}

/** `/` or nothing: the server's root; `/~` and `/~/x`: the login folder (`.`, `x`). */
function remoteRoot(pathname: string): string {
  const trimmed = pathname.length > 1 ? pathname.replace(/\/+$/, '') : pathname
  if (trimmed === '' || trimmed === '/') return '/'
  if (trimmed === '/~') return '.'
  if (trimmed.startsWith('/~/')) return trimmed.slice(3)
  return trimmed
}

/**
 * The host key fingerprints of BANK_RAIL_SFTP_HOST_KEY (one, or several separated by commas:
 * a server's keys of each type, or the old and new key while it changes), or what is wrong.
 */
export function parseHostKeys(value: string): string[] | { problem: string } {
  const keys = value.split(',').map((key) => key.trim()).filter((key) => key !== '')
  if (keys.length === 0) return { problem: 'must name a host key fingerprint, SHA256:…' }
  const bad = keys.find((key) => !fingerprint_pattern.test(key))
  if (bad !== undefined) {
    return { problem: 'each fingerprint must be SHA256: and 43 base64 characters, as ' +
      '`ssh-keyscan <host> | ssh-keygen -lf -` prints it' }
  }
  return keys
}

/** A host key's fingerprint, as `ssh-keygen -l` prints it (`SHA256:` and unpadded base64). */
export function hostKeyFingerprint(key: Buffer): string {
  return `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}`
}
