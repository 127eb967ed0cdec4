import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { owner_only_dir_mode, owner_only_file_mode } from '../data-dir.ts'
import { assert } from '../errors.ts'

// Every secret the bank must read back is sealed here, at rest, with AES-256-GCM under one
// bank key: partners' webhook signing secrets (the bank signs with them, so they cannot be
// hashed like credentials), card PINs' key, the NATS authority's seeds, and the keys
// derived from it (the bulk PIN key, derivedKey). A database dump alone then reveals no
// secret. The key comes from the setting BANK_SECRETS_KEY; unset, the bank creates one on
// first use in `<data dir>/secrets-key` (mode 0600), as it does the operator token.
// Instances that share one PostgreSQL database must share the key (set BANK_SECRETS_KEY on
// each): a secret sealed under another key fails its authentication tag and the bank says so.

const key_bytes = 32
const iv_bytes = 12
const sealed_version = 'v1'
export const secrets_key_file = 'secrets-key'

export class SecretBox {
  private key: Buffer | undefined

  /** `key`, or else a key kept in `<dataDir>/secrets-key`, read (or made) on first use. */
  constructor(private readonly source: { key?: Buffer | undefined; dataDir: string }) {}

  /**
   * Seals `plain`; `context` (e.g. the partner id) is authenticated with it, so a sealed
   * value copied to another row does not open there.
   */
  seal(plain: string, context: string): string {
    const iv = randomBytes(iv_bytes)
    const cipher = createCipheriv('aes-256-gcm', this.bankKey(), iv)
    cipher.setAAD(Buffer.from(context))
    const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
    return [sealed_version, iv, cipher.getAuthTag(), ciphertext].map(
      (part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.')
  }

  open(sealed: string, context: string): string {
    const [version, iv, tag, ciphertext] = sealed.split('.')
    assert(version === sealed_version && iv && tag && ciphertext !== undefined,
      'a sealed secret is not in the v1 format')
    const decipher = createDecipheriv('aes-256-gcm', this.bankKey(), Buffer.from(iv, 'base64url'))
    decipher.setAAD(Buffer.from(context))
    decipher.setAuthTag(Buffer.from(tag, 'base64url'))
    try {
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')),
        decipher.final()]).toString('utf8')
    } catch {
      // Not the partner's mistake: the bank runs with another key than the one that sealed it.
      throw new Error('a webhook secret does not open with this bank key: every instance must ' +
        'use the same BANK_SECRETS_KEY')
    }
  }

  /**
   * A key for another use, derived from the bank key (HKDF-SHA256, `label` as its info), so
   * that every instance sharing the bank key derives the same one and no use sees another's.
   */
  derivedKey(label: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.bankKey(), Buffer.alloc(0), `partner-bank ${label}`,
      key_bytes))
  }

  private bankKey(): Buffer {
    this.key ??= this.source.key ?? keyFromFile(this.source.dataDir)
    assert(this.key.length === key_bytes, `the bank's secrets key must be ${key_bytes} bytes`)
    return this.key
  }
}

/** Reads `<dataDir>/secrets-key`, creating it (0600, exclusive) when absent. */
function keyFromFile(dataDir: string): Buffer {
  const file = path.join(dataDir, secrets_key_file)
  fs.mkdirSync(dataDir, { recursive: true, mode: owner_only_dir_mode })
  if (!fs.existsSync(file)) {
    // Written whole under another name, then linked into place: a process starting at the
    // same moment either finds no file or a complete one, and only one link succeeds.
    const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`
    fs.writeFileSync(draft, `${randomBytes(key_bytes).toString('base64')}\n`,
      { flag: 'wx', mode: owner_only_file_mode })
    try {
      fs.linkSync(draft, file)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    } finally {
      fs.rmSync(draft, { force: true })
    }
  }
  const key = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64')
  assert(key.length === key_bytes, `${file} must hold base64 of ${key_bytes} bytes`)
  return key
}
