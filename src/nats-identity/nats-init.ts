import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { createAccount, createOperator, type KeyPair } from '@nats-io/nkeys'
import type { Kysely } from 'kysely'
import type { Clock } from '../clock.ts'
import type { Database } from '../schema.ts'
import type { SecretBox } from '../secrets/secret-box.ts'
import { bankAccountJwt, operatorJwt, operatorsAccountJwt, systemAccountJwt, type AuthorityKeys } from './nats-claims.ts'
import { NatsIdentity, sealContext, seedOf } from './nats-identity.ts'
import * as store from './nats-identity-store.ts'

// `bank nats init`: makes the bank the NATS authority of a new deployment, once, and writes
// what the NATS servers and the bank's instances need. The keys are made here and kept in
// the bank's database, sealed; run again, it writes the same deployment's files afresh (a
// new bank credentials file, TLS files only where missing) without changing any key.
//
// Written into `dir`:
//   nats-server.conf   operator JWT, system account, the full resolver (the bank pushes
//                      partners' accounts to it) with the bank's own accounts preloaded,
//                      JetStream, TLS. Start every server with `nats-server -c` on it.
//   ca.pem, ca-key.pem a private CA (the key: keep it offline once servers have certificates)
//   server-cert.pem, server-key.pem  the servers' certificate, for the names given
//   bank.creds         the bank instances' NATS user (NATS_CREDS), mode 0600
//   operator.creds     a first operator's NATS user, for the CLI (NATS_CREDS), mode 0600

export interface NatsInitOptions {
  db: Kysely<Database>
  box: SecretBox
  clock: Clock
  dir: string
  /** Where the servers listen: host:port. */
  listen: string
  /** DNS names and IP addresses the server certificate is for. */
  serverNames: string[]
  /** A name for the operator (shown by NATS tools). */
  operatorName?: string
}

export interface NatsInitResult {
  created: boolean
  operator: string
  bankAccount: string
  operatorsAccount: string
  systemAccount: string
  files: { config: string; ca: string; bank_creds: string; operator_creds: string }
}

export async function initNatsDeployment(options: NatsInitOptions): Promise<NatsInitResult> {
  const dir = path.resolve(options.dir)
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  const created = await ensureAuthority(options)
  const identity = await NatsIdentity.load(options.db, options.box, options.clock)
  if (!identity) throw new Error('the NATS authority was not stored')
  const keys = identity.keys
  const files = {
    config: path.join(dir, 'nats-server.conf'),
    ca: path.join(dir, 'ca.pem'),
    caKey: path.join(dir, 'ca-key.pem'),
    serverCert: path.join(dir, 'server-cert.pem'),
    serverKey: path.join(dir, 'server-key.pem'),
    bankCreds: path.join(dir, 'bank.creds'),
    operatorCreds: path.join(dir, 'operator.creds'),
    resolver: path.join(dir, 'resolver'),
    jetstream: path.join(dir, 'jetstream'),
  }
  if (!fs.existsSync(files.serverCert) || !fs.existsSync(files.serverKey)) writeTls(files,
    options.serverNames)
  fs.mkdirSync(files.resolver, { recursive: true })
  const preload = {
    [keys.system.getPublicKey()]: await systemAccountJwt(keys),
    [keys.bank.getPublicKey()]: await bankAccountJwt(keys),
    [keys.operators.getPublicKey()]: await operatorsAccountJwt(keys),
  }
  fs.writeFileSync(files.config, serverConfig({ operatorJwt: identity.row.operator_jwt,
    systemAccount: keys.system.getPublicKey(), preload, listen: options.listen, files }))
  const bank = await identity.issueBankUser(options.db, 'bank instances')
  fs.writeFileSync(files.bankCreds, bank.creds, { mode: 0o600 })
  fs.chmodSync(files.bankCreds, 0o600)
  if (!fs.existsSync(files.operatorCreds)) {
    const operator = await identity.issueOperatorUser(options.db, 'bank nats init')
    fs.writeFileSync(files.operatorCreds, operator.creds, { mode: 0o600 })
  }
  return {
    created,
    operator: keys.operator.getPublicKey(),
    bankAccount: keys.bank.getPublicKey(),
    operatorsAccount: keys.operators.getPublicKey(),
    systemAccount: keys.system.getPublicKey(),
    files: { config: files.config, ca: files.ca, bank_creds: files.bankCreds,
      operator_creds: files.operatorCreds },
  }
}

/** Makes and stores the operator and the bank's accounts, unless they exist; true when made. */
async function ensureAuthority(options: NatsInitOptions): Promise<boolean> {
  if (await store.authorityRow(options.db)) return false
  const keys: AuthorityKeys = { operator: createOperator(), signing: createOperator(),
    system: createAccount(), bank: createAccount(), operators: createAccount() }
  const seal = (key: KeyPair) => options.box.seal(seedOf(key), sealContext(key.getPublicKey()))
  await options.db.transaction().execute(async (trx) => {
    // Two inits at once: the primary key lets one row in.
    await store.insertAuthority(trx, {
      id: 1,
      operator_public_key: keys.operator.getPublicKey(),
      operator_jwt: await operatorJwt(keys, options.operatorName ?? 'partner-bank'),
      operator_seed_sealed: seal(keys.operator),
      signing_seed_sealed: seal(keys.signing),
      system_account: keys.system.getPublicKey(),
      system_seed_sealed: seal(keys.system),
      bank_account: keys.bank.getPublicKey(),
      bank_seed_sealed: seal(keys.bank),
      operators_account: keys.operators.getPublicKey(),
      operators_seed_sealed: seal(keys.operators),
      created_at: options.clock.now(),
    })
  })
  return true
}

export function serverConfig(input: {
  operatorJwt: string
  systemAccount: string
  preload: Record<string, string>
  listen: string
  files: { serverCert: string; serverKey: string; resolver: string; jetstream: string }
}): string {
  const q = JSON.stringify
  return [
    '# Written by `bank nats init`. The bank is the NATS authority: it signs every partner\'s',
    '# account and pushes it to this server\'s resolver, so nothing here changes when partners',
    '# are added, suspended or have credentials revoked. Every server of the deployment runs',
    '# this file (add a `cluster` block to join several).',
    `listen: ${q(input.listen)}`,
    'tls {',
    `  cert_file: ${q(input.files.serverCert)}`,
    `  key_file: ${q(input.files.serverKey)}`,
    '  timeout: 5',
    '}',
    `operator: ${q(input.operatorJwt)}`,
    `system_account: ${q(input.systemAccount)}`,
    'resolver {',
    '  type: full',
    `  dir: ${q(input.files.resolver)}`,
    '  allow_delete: false',
    '  interval: "2m"',
    '  timeout: "5s"',
    '}',
    'resolver_preload {',
    ...Object.entries(input.preload).map(([account, jwt]) => `  ${account}: ${q(jwt)}`),
    '}',
    'jetstream {',
    `  store_dir: ${q(input.files.jetstream)}`,
    '}',
    '',
  ].join('\n')
}

/** A private CA and a server certificate signed by it (ECDSA P-256), made with openssl. */
function writeTls(files: { ca: string; caKey: string; serverCert: string; serverKey: string },
    names: string[]): void {
  const openssl = (args: string[]) => execFileSync('openssl', args,
    { stdio: ['ignore', 'ignore', 'pipe'] })
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes']
  if (!fs.existsSync(files.ca) || !fs.existsSync(files.caKey)) {
    openssl(['req', '-x509', ...ec, '-keyout', files.caKey, '-out', files.ca, '-days', '3650',
      '-subj', '/CN=partner-bank NATS CA',
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext',
        'keyUsage=critical,keyCertSign,cRLSign'])
  }
  const csr = `${files.serverKey}.csr`
  const extensions = `${files.serverKey}.ext`
  const san = names.map((name) => (/^[\d.]+$|:/.test(name) ? `IP:${name}` : `DNS:${name}`)).join(',')
  fs.writeFileSync(extensions,
    `subjectAltName=${san}\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature\n`)
  try {
    openssl(['req', ...ec, '-keyout', files.serverKey, '-out', csr, '-subj',
      `/CN=${names[0] ?? 'nats'}`])
    openssl(['x509', '-req', '-in', csr, '-CA', files.ca, '-CAkey', files.caKey, '-CAcreateserial',
      '-out', files.serverCert, '-days', '825', '-extfile', extensions])
  } finally {
    fs.rmSync(csr, { force: true })
    fs.rmSync(extensions, { force: true })
    fs.rmSync(`${files.ca.replace(/\.pem$/, '')}.srl`, { force: true })
  }
  fs.chmodSync(files.caKey, 0o600)
  fs.chmodSync(files.serverKey, 0o600)
}

/**
 * The account a credentials file's user belongs to (its JWT's issuer account), without checking it.
 */
export function credsAccount(creds: string): string | undefined {
  const jwt = /-----BEGIN NATS USER JWT-----\s*([A-Za-z0-9_.-]+)/.exec(creds)?.[1]
  if (!jwt) return undefined
  try {
    const payload = JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString(
      'utf8')) as { iss?: string; nats?: { issuer_account?: string } }
    return payload.nats?.issuer_account ?? payload.iss
  } catch {
    return undefined
  }
}

