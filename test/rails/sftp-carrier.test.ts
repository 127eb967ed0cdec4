import assert from 'node:assert/strict'
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { after, before, test } from 'node:test'
import { pino } from 'pino'
import { endToEndIdOf } from '../../src/rails/iso20022/end-to-end-id.ts'
import { pacs002Text } from '../../src/rails/iso20022/pacs002-write.ts'
import { RailFolder } from '../../src/rails/rail-folder.ts'
import {
  readSftpTarget, SftpCarrier, SftpCarryError, sftp_carrier_limits, type SftpCarrierLimits,
} from '../../src/rails/sftp-carrier.ts'
import { parseHostKeys, parseSftpUrl } from '../../src/rails/sftp-settings.ts'
import { onboardPartner, startTestBank, type TestBank } from '../support/harness.ts'
import { balances, fund, newAccount, transferBody, txById } from '../transfers/helpers.ts'

// The ISO rail's SFTP carrier (src/rails/sftp-carrier.ts) against Debian's OpenSSH server,
// started here on a free loopback port with a host key, an authorized key and a remote root
// of its own (internal-sftp), and killed by its pid. The carrier moves the bank's
// outbound/ to the server's inbound/ and the server's outbound/ into the bank's inbound/;
// the last test runs it inside a real bank: a clearing run's pacs.008 reaches the server,
// the clearing house's pacs.002 placed there settles the payout, a second copy is applied
// once, and a pass with the server down fails without stopping the bank.

const sshd_path = '/usr/sbin/sshd'
const silent = pino({ level: 'silent' })

const work = mkdtempSync(path.join(os.tmpdir(), 'bank-sftp-'))
const remoteRoot = path.join(work, 'remote')
const remote = { inbound: path.join(remoteRoot, 'inbound'),
  outbound: path.join(remoteRoot, 'outbound') }
const keyFile = path.join(work, 'bank_key')
const hostKey = path.join(work, 'host_key')
let port = 0
let sshd: ChildProcess | undefined

function keygen(file: string): void {
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'test', '-f', file])
}

/** The fingerprint as the operator's `ssh-keygen -lf` prints it (not the bank's own code). */
function fingerprintOf(publicKeyFile: string): string {
  const printed = execFileSync('ssh-keygen', ['-lf', publicKeyFile], { encoding: 'utf8' })
  const found = /SHA256:[A-Za-z0-9+/]+/.exec(printed)
  assert.ok(found, printed)
  return found[0]
}

async function freePort(): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port: free } = server.address() as net.AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return free
}

async function writeSshdConfig(): Promise<string> {
  const config = path.join(work, 'sshd_config')
  await fs.writeFile(config, [
    `Port ${port}`, 'ListenAddress 127.0.0.1', `HostKey ${hostKey}`, 'PidFile none',
    `AuthorizedKeysFile ${path.join(work, 'authorized_keys')}`,
    'PubkeyAuthentication yes', 'PasswordAuthentication no', 'KbdInteractiveAuthentication no',
    // Tests may run as root; the temporary folders are not root's alone.
    'PermitRootLogin prohibit-password', 'StrictModes no', 'UsePAM no',
    'Subsystem sftp internal-sftp', '',
  ].join('\n'))
  return config
}

/** Starts sshd in the foreground on `port`; resolves once it listens (bounded). */
async function startSshd(): Promise<void> {
  // As root, sshd needs its privilege separation folder (Debian's service makes it at boot).
  if (process.getuid?.() === 0) mkdirSync('/run/sshd', { recursive: true, mode: 0o755 })
  const child = spawn(sshd_path, ['-D', '-e', '-f', await writeSshdConfig()],
    { stdio: ['ignore', 'ignore', 'pipe'] })
  let said = ''
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sshd did not listen: ${said}`)), 20_000)
    child.stderr!.on('data', (chunk: Buffer) => {
      said += chunk.toString()
      if (said.includes('Server listening on')) {
        clearTimeout(timer)
        resolve()
      }
    })
    child.on('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`sshd exited (${code}): ${said}`))
    })
  })
  child.stderr!.resume()
  sshd = child
}

/** Kills this file's sshd by its pid and waits for it to be gone. */
async function stopSshd(): Promise<void> {
  const child = sshd
  sshd = undefined
  if (!child || child.exitCode !== null || child.signalCode !== null) return
  const gone = new Promise((resolve) => child.once('exit', resolve))
  process.kill(child.pid!, 'SIGKILL')
  await gone
}

before(async () => {
  keygen(hostKey)
  keygen(keyFile)
  await fs.copyFile(`${keyFile}.pub`, path.join(work, 'authorized_keys'))
  await fs.mkdir(remote.inbound, { recursive: true })
  await fs.mkdir(remote.outbound, { recursive: true })
  port = await freePort()
  await startSshd()
})

after(async () => {
  await stopSshd()
  rmSync(work, { recursive: true, force: true })
})

const url = () => `sftp://${os.userInfo().username}@127.0.0.1:${port}${remoteRoot}`

/** The carrier's target as the bank builds it from its settings. */
function target(hostKeys = fingerprintOf(`${hostKey}.pub`), key = keyFile) {
  const address = parseSftpUrl(url())
  const keys = parseHostKeys(hostKeys)
  assert.ok(!('problem' in address) && !('problem' in keys))
  return readSftpTarget({ address, keyFile: key, hostKeys: keys })
}

let folders = 0
/** A fresh rail folder and a carrier over it, the remote folders emptied. */
async function carrierOf(options: { hostKeys?: string; key?: string;
    limits?: Partial<SftpCarrierLimits> } = {}) {
  for (const dir of [remote.inbound, remote.outbound]) {
    await fs.rm(dir, { recursive: true })
    await fs.mkdir(dir)
  }
  const folder = new RailFolder(path.join(work, `rail-${++folders}`))
  await folder.ensure()
  const carrier = new SftpCarrier(folder, target(options.hostKeys, options.key), silent,
    { ...sftp_carrier_limits, ...options.limits })
  return { folder, carrier }
}

/** Places a file on the server as a clearing house would: a dot name, then the rename. */
async function placeAnswer(name: string, content: string | Buffer): Promise<void> {
  const temporary = path.join(remote.outbound, `.${name}.part`)
  await fs.writeFile(temporary, content)
  await fs.rename(temporary, path.join(remote.outbound, name))
}

const names = async (dir: string) => (await fs.readdir(dir)).sort()

/** A file of `bytes` bytes that is not all one byte (so a misplaced chunk shows). */
function bytesOf(bytes: number): Buffer {
  return Buffer.from(randomBytes(Math.ceil(bytes / 2)).toString('hex').slice(0, bytes))
}

test('sftp carrier - the bank\'s files arrive on the server whole, and move to outbound/sent/', async () => {
  const { folder, carrier } = await carrierOf()
  // Larger than a chunk (written in several requests), and a small one.
  const large = bytesOf(sftp_carrier_limits.chunk_bytes * 2 + 1234)
  await folder.write(folder.outbound, 'pacs.008.PB01.xml', [large.toString()])
  await folder.write(folder.outbound, 'pacs.004.PB02.xml', ['<Document/>'])
  assert.deepEqual(await carrier.carry(), { uploaded: 2, downloaded: 0, too_large: 0 })
  assert.deepEqual(await names(remote.inbound), ['pacs.004.PB02.xml', 'pacs.008.PB01.xml'],
    'under their real names, no temporary file left')
  assert.deepEqual(await fs.readFile(path.join(remote.inbound, 'pacs.008.PB01.xml')), large)
  assert.equal(await fs.readFile(path.join(remote.inbound, 'pacs.004.PB02.xml'), 'utf8'),
    '<Document/>')
  assert.deepEqual(await folder.list(folder.outbound), [])
  assert.deepEqual(await names(carrier.sent), ['pacs.004.PB02.xml', 'pacs.008.PB01.xml'])
  assert.deepEqual(await carrier.carry(), { uploaded: 0, downloaded: 0, too_large: 0 },
    'a file handed over is not sent again')

  // Written again (a crash before its record said so): the upload replaces the first copy.
  await folder.write(folder.outbound, 'pacs.004.PB02.xml', ['<Document>again</Document>'])
  assert.equal((await carrier.carry()).uploaded, 1)
  assert.equal(await fs.readFile(path.join(remote.inbound, 'pacs.004.PB02.xml'), 'utf8'),
    '<Document>again</Document>')
})

test('sftp carrier - answers on the server arrive in inbound/ whole, oldest first, and leave the server', async () => {
  const { folder, carrier } = await carrierOf()
  const statusReport = bytesOf(sftp_carrier_limits.chunk_bytes + 77)
  await placeAnswer('pacs.002.CH02.xml', statusReport)
  await placeAnswer('pacs.004.CH01.xml', '<Document>return</Document>')
  // CH02 arrived first, though its name sorts last.
  await fs.utimes(path.join(remote.outbound, 'pacs.002.CH02.xml'), 1_000, 1_000)
  await fs.utimes(path.join(remote.outbound, 'pacs.004.CH01.xml'), 2_000, 2_000)
  // Not answers: a file still being written (a dot name) and a file that is not XML.
  await fs.writeFile(path.join(remote.outbound, '.pacs.002.CH03.xml.part'), '<Doc')
  await fs.writeFile(path.join(remote.outbound, 'README.txt'), 'not for the bank')

  assert.deepEqual(await carrier.carry(), { uploaded: 0, downloaded: 2, too_large: 0 })
  assert.deepEqual(await names(folder.inbound), ['pacs.002.CH02.xml', 'pacs.004.CH01.xml'],
    'under their real names, no temporary file left')
  assert.deepEqual(await fs.readFile(path.join(folder.inbound, 'pacs.002.CH02.xml')),
    statusReport)
  const first = await folder.modifiedAt(folder.inbound, 'pacs.002.CH02.xml')
  const second = await folder.modifiedAt(folder.inbound, 'pacs.004.CH01.xml')
  assert.ok(first <= second, 'downloaded in the order they arrived on the server')
  assert.deepEqual(await names(remote.outbound), ['.pacs.002.CH03.xml.part', 'README.txt'],
    'removed from the server once the bank holds them; the rest left alone')
})

test('sftp carrier - an answer of file_bytes_max bytes is carried, one a byte larger stays on the server', async () => {
  const { folder, carrier } = await carrierOf({ limits: { file_bytes_max: 4096,
    chunk_bytes: 1000 } })
  await placeAnswer('pacs.002.CHATMAX.xml', bytesOf(4096))
  await placeAnswer('pacs.002.CHOVER.xml', bytesOf(4097))
  assert.deepEqual(await carrier.carry(), { uploaded: 0, downloaded: 1, too_large: 1 })
  assert.deepEqual(await folder.list(folder.inbound), ['pacs.002.CHATMAX.xml'])
  assert.equal((await fs.stat(path.join(folder.inbound, 'pacs.002.CHATMAX.xml'))).size, 4096)
  assert.deepEqual(await names(remote.outbound), ['pacs.002.CHOVER.xml'])
  assert.deepEqual((await fs.readdir(folder.inbound)).filter((n) => n.startsWith('.')), [],
    'no temporary file left behind')
})

test('sftp carrier - the bound is default the readers\' bound and a margin', () => {
  assert.equal(sftp_carrier_limits.file_bytes_max, 256 * 1024 * 1024 + 1024 * 1024)
})

/** A pass that must fail and move nothing: files on both sides stay where they were. */
async function expectNothingMoves(carrier: SftpCarrier, folder: RailFolder, reason: RegExp) {
  await assert.rejects(carrier.carry(), (error: Error) => {
    assert.ok(error instanceof SftpCarryError, String(error))
    assert.match(error.message, reason)
    return true
  })
  assert.deepEqual(await folder.list(folder.outbound), ['pacs.008.PB10.xml'])
  assert.deepEqual(await names(remote.inbound), [])
  assert.deepEqual(await names(remote.outbound), ['pacs.002.CH10.xml'])
  assert.deepEqual(await folder.list(folder.inbound), [])
}

test('sftp carrier - a host key other than the one given is refused, and nothing moves', async () => {
  const other = path.join(work, 'other_host_key')
  keygen(other)
  const { folder, carrier } = await carrierOf({ hostKeys: fingerprintOf(`${other}.pub`) })
  await folder.write(folder.outbound, 'pacs.008.PB10.xml', ['<Document/>'])
  await placeAnswer('pacs.002.CH10.xml', '<Document/>')
  const offered = fingerprintOf(`${hostKey}.pub`)
  await expectNothingMoves(carrier, folder, new RegExp(`offered host key ${
    offered.replaceAll('+', '\\+')}, which is not BANK_RAIL_SFTP_HOST_KEY`))

  // The server's key among several given (a key being changed): accepted.
  const both = await carrierOf({ hostKeys: `${fingerprintOf(`${other}.pub`)},${offered}` })
  await placeAnswer('pacs.002.CH11.xml', '<Document/>')
  assert.equal((await both.carrier.carry()).downloaded, 1)
})

test('sftp carrier - a key the server does not know is refused, and nothing moves', async () => {
  const stranger = path.join(work, 'stranger_key')
  keygen(stranger)
  const { folder, carrier } = await carrierOf({ key: stranger })
  await folder.write(folder.outbound, 'pacs.008.PB10.xml', ['<Document/>'])
  await placeAnswer('pacs.002.CH10.xml', '<Document/>')
  await expectNothingMoves(carrier, folder, /the server refused the bank's key for user/)
})

test('sftp carrier - with the server stopped a pass fails clearly, the folder pass still runs, and a later pass carries everything', async () => {
  const { folder, carrier } = await carrierOf()
  await folder.write(folder.outbound, 'pacs.008.PB10.xml', ['<Document/>'])
  await placeAnswer('pacs.002.CH10.xml', '<Document/>')
  await stopSshd()
  await expectNothingMoves(carrier, folder, /connecting failed: .*ECONNREFUSED/)
  let ran = false
  await assert.rejects(carrier.around(async () => { ran = true }), SftpCarryError)
  assert.equal(ran, true, 'the bank still applies what it holds while the server is away')

  await startSshd()
  const applied = await carrier.around(async () => folder.list(folder.inbound))
  assert.deepEqual(applied, ['pacs.002.CH10.xml'], 'the pass saw the answer carried before it')
  assert.deepEqual(await names(remote.inbound), ['pacs.008.PB10.xml'])
  assert.deepEqual(await names(remote.outbound), [])
})

test('sftp carrier - around carries what the pass wrote on the same connection', async () => {
  const { folder, carrier } = await carrierOf()
  await carrier.around(() => folder.write(folder.outbound, 'pacs.004.PB20.xml', ['<D/>']))
  assert.deepEqual(await names(remote.inbound), ['pacs.004.PB20.xml'])
})

test('sftp carrier - the key file must hold a private key the bank can use', () => {
  const address = parseSftpUrl(url())
  assert.ok(!('problem' in address))
  const settings = (file: string) => ({ address, keyFile: file, hostKeys: ['SHA256:x'] })
  assert.throws(() => readSftpTarget(settings(path.join(work, 'missing'))),
    /BANK_RAIL_SFTP_KEY_FILE \(.*missing\) cannot be read: ENOENT/)
  assert.throws(() => readSftpTarget(settings(`${keyFile}.pub`)), /holds a public key/)
  const locked = path.join(work, 'locked_key')
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', 'a passphrase', '-f', locked])
  assert.throws(() => readSftpTarget(settings(locked)), (error: Error) =>
    /not a private key the bank can use .*without a passphrase/.test(error.message)
      && !error.message.includes('PRIVATE KEY'))
})

// The carrier inside a real bank (sandbox mode, no simulator: the server's clearing house
// answers), on this file's back end.
test('sftp carrier - a clearing run\'s pacs.008 reaches the server, its answer settles the payout once', async () => {
  await carrierOf()
  const tb = await startTestBank({ persistent: false, env: {
    BANK_RAIL_SFTP_URL: url(), BANK_RAIL_SFTP_KEY_FILE: keyFile,
    BANK_RAIL_SFTP_HOST_KEY: fingerprintOf(`${hostKey}.pub`),
  } })
  try {
    await endToEnd(tb)
  } finally {
    await tb.stop()
  }
})

async function endToEnd(tb: TestBank): Promise<void> {
  const iso = tb.bank.services.isoRail
  assert.equal(iso.answersAtOnce, false, 'no simulator beside the SFTP server')
  const p = await onboardPartner(tb, { approve: true })
  const account = await newAccount(p)
  await fund(tb, account, 100_000)
  const sent = await p.client.accounts.transfer(transferBody(account, { amount: 10_000 }))
  tb.clock.advance(60_000)
  await tb.operator.clearing.run()
  const [fileName] = await names(remote.inbound)
  assert.match(fileName!, /^pacs\.008\.PB[0-9a-f]{32}\.xml$/, 'the cycle\'s file is on the server')
  assert.deepEqual(await fs.readFile(path.join(remote.inbound, fileName!)),
    await fs.readFile(path.join(iso.folder.outbound, 'sent', fileName!)), 'whole')
  assert.equal((await txById(p, sent.tx_id)).status, 'Pending')

  const answer = await pacs002Text({ message_id: 'CHSFTP0001', created_at: tb.clock.now(),
    original_message_id: fileName!.slice(9, -4) },
  [{ original_end_to_end_id: endToEndIdOf(sent.tx_id), status: 'ACSC' }])
  await placeAnswer('pacs.002.CHSFTP0001.xml', answer)
  // What the rail.inbound job runs every 30 s.
  assert.equal((await iso.exchange()).settled, 1)
  assert.equal((await txById(p, sent.tx_id)).status, 'Successful')
  assert.deepEqual(await names(remote.outbound), [])
  const settled = await balances(p, account)

  // The same answer carried a second time (a crash before it left the server): archived only.
  await placeAnswer('pacs.002.CHSFTP0001.xml', answer)
  const again = await iso.exchange()
  assert.deepEqual([again.settled, again.files_applied], [0, 0])
  assert.deepEqual(await balances(p, account), settled)
  assert.ok(await iso.folder.exists(iso.folder.archive, 'pacs.002.CHSFTP0001.xml'))

  // With the server down the pass fails, and the bank keeps answering; then it recovers.
  await stopSshd()
  await assert.rejects(iso.exchange(), /rail SFTP .*connecting failed/)
  assert.deepEqual(await balances(p, account), settled, 'the bank still answers')
  await placeAnswer('pacs.002.CHSFTP0001.xml', answer)
  await startSshd()
  assert.deepEqual((await iso.exchange()).files_applied, 0)
  assert.deepEqual(await names(remote.outbound), [], 'carried once the server is back')
}
