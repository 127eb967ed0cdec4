import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createAccount, createOperator, type KeyPair } from '@nats-io/nkeys'
import type { Kysely } from 'kysely'
import type { Clock } from '../clock.ts'
import type { Database } from '../schema.ts'
import type { SecretBox } from '../secrets/secret-box.ts'
import {
  bankAccountJwt, cardNetworkAccountJwt, operatorJwt, operatorsAccountJwt, systemAccountJwt,
} from './nats-claims.ts'
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
//   card-network.creds the card network's NATS user (publishes on net.card.> only), mode 0600
// An authority set up before the card network had an account gets one on the next run.

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
  /** JetStream's file storage on each server (bytes); default: serverLimitsFor's. */
  jetstreamDisk?: number | undefined
  /** JetStream's memory storage on each server (bytes); default: serverLimitsFor's. */
  jetstreamMemory?: number | undefined
}

export interface NatsInitResult {
  created: boolean
  operator: string
  bankAccount: string
  operatorsAccount: string
  cardNetworkAccount: string
  systemAccount: string
  files: { config: string; ca: string; bank_creds: string; operator_creds: string;
    card_network_creds: string }
  /** What nats-server.conf lets every server's clients and JetStream use. */
  limits: ServerLimits
}

export async function initNatsDeployment(options: NatsInitOptions): Promise<NatsInitResult> {
  const dir = path.resolve(options.dir)
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  const created = await ensureAuthority(options)
  await ensureCardNetworkAccount(options)
  const identity = await NatsIdentity.load(options.db, options.box, options.clock)
  if (!identity) throw new Error('the NATS authority was not stored')
  const keys = identity.keys
  const cardNetwork = keys.cardNetwork
  if (!cardNetwork) throw new Error('the card network\'s NATS account was not stored')
  const files = filesIn(dir)
  if (!fs.existsSync(files.serverCert) || !fs.existsSync(files.serverKey)) writeTls(files,
    options.serverNames)
  fs.mkdirSync(files.resolver, { recursive: true })
  const preload = {
    [keys.system.getPublicKey()]: await systemAccountJwt(keys),
    [keys.bank.getPublicKey()]: await bankAccountJwt(keys),
    [keys.operators.getPublicKey()]: await operatorsAccountJwt(keys),
    [cardNetwork.getPublicKey()]: await cardNetworkAccountJwt(keys, cardNetwork),
  }
  const limits = serverLimitsFor({ diskBytes: availableBytes(dir), memoryBytes: os.totalmem() },
    { maxFileStore: options.jetstreamDisk, maxMemoryStore: options.jetstreamMemory })
  fs.writeFileSync(files.config, serverConfig({ operatorJwt: identity.row.operator_jwt,
    systemAccount: keys.system.getPublicKey(), preload, listen: options.listen, files, limits }))
  await writeUsers(identity, options.db, files)
  return {
    created,
    operator: keys.operator.getPublicKey(),
    bankAccount: keys.bank.getPublicKey(),
    operatorsAccount: keys.operators.getPublicKey(),
    cardNetworkAccount: cardNetwork.getPublicKey(),
    systemAccount: keys.system.getPublicKey(),
    files: { config: files.config, ca: files.ca, bank_creds: files.bankCreds,
      operator_creds: files.operatorCreds, card_network_creds: files.cardNetworkCreds },
    limits,
  }
}

/** What nats-server.conf lets clients and JetStream use on each server (serverConfig says why). */
export interface ServerLimits {
  maxConnections: number
  maxPayload: number
  maxFileStore: number
  maxMemoryStore: number
}

const mib = 1024 ** 2
/** Server memory a client connection is given room for (≈42 KB measured idle, and buffers). */
const connection_bytes = 64 * 1024

/**
 * The servers' limits for a machine: connections within a quarter of its memory (from 1,024 to
 * nats-server's own default of 65,536), 1 MiB messages, JetStream on half the disk space free
 * where it stores (the rest is PostgreSQL's, the logs' and the system's) and a quarter of the
 * memory. `given` overrides JetStream's.
 */
export function serverLimitsFor(machine: { diskBytes: number; memoryBytes: number },
    given: { maxFileStore?: number | undefined; maxMemoryStore?: number | undefined } = {},
): ServerLimits {
  const floorMib = (bytes: number) => Math.floor(bytes / mib) * mib
  return {
    maxConnections: Math.min(65_536, Math.max(1_024,
      Math.floor(machine.memoryBytes / 4 / connection_bytes))),
    maxPayload: mib,
    maxFileStore: given.maxFileStore ?? floorMib(machine.diskBytes / 2),
    maxMemoryStore: given.maxMemoryStore ?? floorMib(machine.memoryBytes / 4),
  }
}

/** The bytes free to an unprivileged writer on the file system holding `dir`. */
function availableBytes(dir: string): number {
  const stats = fs.statfsSync(dir)
  return stats.bavail * stats.bsize
}

/** The files `bank nats init` writes into `dir`. */
function filesIn(dir: string) {
  return {
    config: path.join(dir, 'nats-server.conf'),
    ca: path.join(dir, 'ca.pem'),
    caKey: path.join(dir, 'ca-key.pem'),
    serverCert: path.join(dir, 'server-cert.pem'),
    serverKey: path.join(dir, 'server-key.pem'),
    bankCreds: path.join(dir, 'bank.creds'),
    operatorCreds: path.join(dir, 'operator.creds'),
    cardNetworkCreds: path.join(dir, 'card-network.creds'),
    resolver: path.join(dir, 'resolver'),
    jetstream: path.join(dir, 'jetstream'),
  }
}

/**
 * The users' creds files: a new bank.creds every run; operator.creds and card-network.creds
 * only where missing (move one aside to have a new user made).
 */
async function writeUsers(identity: NatsIdentity, db: Kysely<Database>,
    files: ReturnType<typeof filesIn>): Promise<void> {
  const bank = await identity.issueBankUser(db, 'bank instances')
  fs.writeFileSync(files.bankCreds, bank.creds, { mode: 0o600 })
  fs.chmodSync(files.bankCreds, 0o600)
  if (!fs.existsSync(files.operatorCreds)) {
    const operator = await identity.issueOperatorUser(db, 'bank nats init')
    fs.writeFileSync(files.operatorCreds, operator.creds, { mode: 0o600 })
  }
  if (!fs.existsSync(files.cardNetworkCreds)) {
    const network = await identity.issueCardNetworkUser(db, 'bank nats init')
    fs.writeFileSync(files.cardNetworkCreds, network.creds, { mode: 0o600 })
  }
}

/**
 * Makes and stores the operator and the bank's accounts (the card network's among them),
 * unless they exist; true when made.
 */
async function ensureAuthority(options: NatsInitOptions): Promise<boolean> {
  if (await store.authorityRow(options.db)) return false
  const keys = { operator: createOperator(), signing: createOperator(), system: createAccount(),
    bank: createAccount(), operators: createAccount(), cardNetwork: createAccount() }
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
      card_network_account: keys.cardNetwork.getPublicKey(),
      card_network_seed_sealed: seal(keys.cardNetwork),
      created_at: options.clock.now(),
    })
  })
  return true
}

/**
 * Makes and stores the card network's account for an authority set up before it had one (a
 * deployment that ran `bank nats init` before this release); nothing when it has one.
 */
async function ensureCardNetworkAccount(options: NatsInitOptions): Promise<void> {
  const row = await store.authorityRow(options.db)
  if (!row || row.card_network_account) return
  const account = createAccount()
  // Two runs at once: the first stored wins, and the second's key is dropped unused.
  await store.setCardNetworkAccount(options.db, {
    card_network_account: account.getPublicKey(),
    card_network_seed_sealed: options.box.seal(seedOf(account),
      sealContext(account.getPublicKey())),
  })
}

export function serverConfig(input: {
  operatorJwt: string
  systemAccount: string
  preload: Record<string, string>
  listen: string
  files: { serverCert: string; serverKey: string; resolver: string; jetstream: string }
  limits: ServerLimits
}): string {
  const q = JSON.stringify
  return [
    '# Written by `bank nats init`. The bank is the NATS authority: it signs every partner\'s',
    '# account and pushes it to this server\'s resolver, so nothing here changes when partners',
    '# are added, suspended or have credentials revoked. Every server of the deployment runs',
    '# this file (add a `cluster` block to join several).',
    `listen: ${q(input.listen)}`,
    ...clientLimitLines(input.limits),
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
    ...jetstreamLimitLines(input.limits),
    '}',
    '',
  ].join('\n')
}

/** The server's bounds on all clients together, each with why (serverLimitsFor). */
function clientLimitLines(limits: ServerLimits): string[] {
  return [
    '# Every partner\'s account has limits of its own (connections, subscriptions, payload,',
    '# JetStream), signed into its account JWT; these bound the server as a whole.',
    `# Connections: room for ${limits.maxConnections} at ~64 KiB of server memory each, within a`,
    '# quarter of this machine\'s memory (nats-server\'s default, 65,536, is the most).',
    `max_connections: ${limits.maxConnections}`,
    '# The largest message (headers included): a partner\'s account allows 784 KiB, its largest',
    '# request (a bulk payment, 768 KiB, and its headers); the bank\'s replies may use the rest.',
    `max_payload: ${limits.maxPayload}`,
  ]
}

/** JetStream's storage on this server, with why (serverLimitsFor). */
function jetstreamLimitLines(limits: ServerLimits): string[] {
  const gib = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(1)} GiB`
  return [
    `  # Half the disk space free at \`bank nats init\` (${gib(limits.maxFileStore)}): the rest is`,
    '  # PostgreSQL\'s, the logs\' and the system\'s. Partners\' JetStream disk quotas together',
    '  # should stay within it (`bank status` warns when they do not). Set it again if JetStream',
    '  # gets a disk of its own (`bank nats init --jetstream-disk BYTES`).',
    `  max_file_store: ${limits.maxFileStore}`,
    `  # A quarter of this machine's memory (${gib(limits.maxMemoryStore)}).`,
    `  max_memory_store: ${limits.maxMemoryStore}`,
  ]
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

