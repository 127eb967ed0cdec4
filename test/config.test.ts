import assert from 'node:assert/strict'
import { test } from 'node:test'
import { loadConfig } from '../src/config.ts'

test('config - the defaults run embedded, with the documented limits', () => {
  const config = loadConfig({})
  assert.equal(config.databaseUrl, undefined)
  assert.equal(config.natsUrl, undefined)
  assert.equal(config.requestBytesMax, 65536)
  assert.equal(config.transferKeyWindowMs, 86_400_000)
  assert.deepEqual(config.fees, { EFT: 250n, RTC: 700n, INTERNAL: 0n })
  assert.deepEqual(config.eftCyclesSast, [7 * 60, 10 * 60, 13 * 60, 16 * 60])
  assert.equal(config.rtcRecoveryAfterMs, 60_000)
  assert.equal(config.clearingSchedule, true)
  assert.equal(config.declaredHolidays.size, 0)
})

test('config - a limit is accepted at its bounds and refused just past them, naming the variable', () => {
  assert.equal(loadConfig({ BANK_REQUEST_BYTES_MAX: '1024' }).requestBytesMax, 1024)
  assert.equal(loadConfig({ BANK_REQUEST_BYTES_MAX: '1048576' }).requestBytesMax, 1048576)
  assert.throws(() => loadConfig({ BANK_REQUEST_BYTES_MAX: '1023' }), /BANK_REQUEST_BYTES_MAX/)
  assert.throws(() => loadConfig({ BANK_REQUEST_BYTES_MAX: '1048577' }), /BANK_REQUEST_BYTES_MAX/)
  assert.equal(loadConfig({ BANK_LEDGER_BATCH_JOBS_MAX: '2000' }).ledgerBatchJobsMax, 2000)
  assert.throws(() => loadConfig({ BANK_LEDGER_BATCH_JOBS_MAX: '2001' }), /BANK_LEDGER_BATCH_JOBS_MAX/)
  assert.throws(() => loadConfig({ BANK_LEDGER_BATCH_JOBS_MAX: '0' }), /BANK_LEDGER_BATCH_JOBS_MAX/)
  assert.throws(() => loadConfig({ BANK_FEE_EFT_CENTS: '-1' }), /BANK_FEE_EFT_CENTS/)
  assert.throws(() => loadConfig({ BANK_FEE_RTC_CENTS: '2.5' }), /BANK_FEE_RTC_CENTS/)
  assert.equal(loadConfig({ BANK_FEE_INTERNAL_CENTS: '1000000' }).fees.INTERNAL, 1_000_000n)
  assert.throws(() => loadConfig({ BANK_FEE_INTERNAL_CENTS: '1000001' }), /BANK_FEE_INTERNAL_CENTS/)
  assert.throws(() => loadConfig({ BANK_FEE_INTERNAL_CENTS: '-1' }), /BANK_FEE_INTERNAL_CENTS/)
})

test('config - malformed settings are refused with the variable named', () => {
  assert.throws(() => loadConfig({ BANK_EFT_CYCLES_SAST: '7:00' }), /BANK_EFT_CYCLES_SAST/)
  assert.throws(() => loadConfig({ BANK_EFT_CYCLES_SAST: '24:00' }), /BANK_EFT_CYCLES_SAST/)
  assert.throws(() => loadConfig({ BANK_EFT_CYCLES_SAST: '23:60' }), /BANK_EFT_CYCLES_SAST/)
  assert.equal(loadConfig({ BANK_EFT_CYCLES_SAST: '23:59' }).eftCyclesSast[0], 23 * 60 + 59)
  assert.throws(() => loadConfig({ BANK_DECLARED_HOLIDAYS: '2026-13' }), /BANK_DECLARED_HOLIDAYS/)
  assert.throws(() => loadConfig({ LOG_LEVEL: 'loud' }), /LOG_LEVEL/)
  assert.throws(() => loadConfig({ BANK_CLEARING_SCHEDULE: 'yes' }), /BANK_CLEARING_SCHEDULE/)
  assert.throws(
    () => loadConfig({ BANK_ACCOUNT_NUMBER_FIRST: '500', BANK_ACCOUNT_NUMBER_LAST: '499' }),
    /BANK_ACCOUNT_NUMBER_FIRST is above BANK_ACCOUNT_NUMBER_LAST/,
  )
})

test('config - a bad setting is reported with the value given and what the setting takes, never as NaN', () => {
  assert.throws(() => loadConfig({ BANK_DB_POOL_MAX: 'abc' }), (error: Error) => {
    assert.equal(error.message, 'invalid configuration: BANK_DB_POOL_MAX="abc" is not valid: ' +
      'must be a whole number from 1 to 200')
    return true
  })
  assert.throws(() => loadConfig({ LOG_LEVEL: 'loud' }), /LOG_LEVEL="loud" is not valid: must be one of fatal, error, warn, info, debug, trace, silent/)
  assert.throws(() => loadConfig({ BANK_METRICS_PORT: '70000' }), /BANK_METRICS_PORT="70000" is not valid: must be a whole number from 0 to 65535/)
  assert.throws(() => loadConfig({ BANK_DB_POOL_MAX: 'x', LOG_LEVEL: 'y' }), (e: Error) => /BANK_DB_POOL_MAX="x"/.test(e.message) && /LOG_LEVEL="y"/.test(e.message), 'every bad setting at once')
  assert.doesNotThrow(() => loadConfig({ BANK_METRICS_PORT: '0' }))
  assert.equal(loadConfig({}).metrics, undefined, 'metrics are off unless BANK_METRICS_PORT is set')
  assert.deepEqual(loadConfig({ BANK_METRICS_PORT: '9464' }).metrics,
    { host: '127.0.0.1', port: 9464 })
})

test('config - cycles are sorted and declared holidays parsed', () => {
  const config = loadConfig({ BANK_EFT_CYCLES_SAST: '16:30,08:15',
    BANK_DECLARED_HOLIDAYS: '2026-12-31,2027-01-02' })
  assert.deepEqual(config.eftCyclesSast, [8 * 60 + 15, 16 * 60 + 30])
  assert.deepEqual([...config.declaredHolidays], ['2026-12-31', '2027-01-02'])
})

test('config - sandbox mode is on by default with embedded storage and off with PostgreSQL unless set', () => {
  assert.equal(loadConfig({}).sandbox, true)
  assert.equal(loadConfig({ DATABASE_URL: 'postgres://bank@localhost/bank', BANK_RAIL_DIR: '/srv/rail' }).sandbox, false)
  assert.equal(loadConfig({ DATABASE_URL: 'postgres://bank@localhost/bank', BANK_SANDBOX: 'true' }).sandbox, true)
  assert.equal(loadConfig({ BANK_SANDBOX: 'false', BANK_RAIL_DIR: '/srv/rail' }).sandbox, false)
  assert.throws(() => loadConfig({ BANK_SANDBOX: 'yes' }), /BANK_SANDBOX/)
})

test('config - the one-time PIN key is base64 of exactly 32 bytes, or unset', () => {
  assert.equal(loadConfig({}).otpKey, undefined)
  const key = Buffer.alloc(32, 7)
  assert.deepEqual(loadConfig({ BANK_OTP_KEY: key.toString('base64') }).otpKey, key)
  assert.throws(() => loadConfig({ BANK_OTP_KEY: Buffer.alloc(31, 7).toString('base64') }), /BANK_OTP_KEY/)
  assert.throws(() => loadConfig({ BANK_OTP_KEY: Buffer.alloc(33, 7).toString('base64') }), /BANK_OTP_KEY/)
  assert.throws(() => loadConfig({ BANK_OTP_KEY: 'not base64!' }), /BANK_OTP_KEY/)
})

test('config - production refuses to start without a rail, and names the settings that give one', () => {
  const named = /invalid configuration: production needs a rail: set BANK_RAIL_DIR \(the folder shared with the clearing house\), BANK_RAIL_SFTP_URL \(its SFTP server\) or BANK_RAIL_GATEWAY_URL \(its RTC gateway\)/
  assert.throws(() => loadConfig({ BANK_SANDBOX: 'false' }), named)
  // Production by default (PostgreSQL, BANK_SANDBOX unset): the message says why it is production.
  assert.throws(() => loadConfig({ DATABASE_URL: 'postgres://bank@localhost/bank' }), (error: Error) =>
    named.test(error.message) && /DATABASE_URL is set and BANK_SANDBOX is not; BANK_SANDBOX=true runs a sandbox/.test(error.message))
  // A tool that opens only the store (`bank nats init`) loads production without one.
  assert.equal(loadConfig({ BANK_SANDBOX: 'false' }, { railRequired: false }).sandbox, false)
})

test('config - production starts with any one rail; the payouts no rail carries are named in a warning', () => {
  const production = { BANK_SANDBOX: 'false', BANK_DATA_DIR: '/srv/bank' }
  const folder = loadConfig({ ...production, BANK_RAIL_DIR: '/srv/clearing' })
  assert.equal(folder.rail.dir, '/srv/clearing')
  assert.deepEqual(folder.railWarnings, [
    'no RTC gateway (BANK_RAIL_GATEWAY_URL is unset): RTC payouts stay Pending until one is set'])
  const sftp = loadConfig({ ...production, BANK_RAIL_SFTP_URL: 'sftp://bank@clearing.example/pb',
    BANK_RAIL_SFTP_KEY_FILE: '/etc/bank/rail-key',
    BANK_RAIL_SFTP_HOST_KEY: `SHA256:${'A'.repeat(43)}` })
  assert.equal(sftp.railWarnings.length, 1)
  assert.match(sftp.railWarnings[0]!, /^no RTC gateway/)
  const gateway = loadConfig({ ...production, BANK_RAIL_GATEWAY_URL: 'https://gateway.clearing.example/rtc' })
  assert.equal(gateway.rail.dir, '/srv/bank/rail', 'EFT files still have a folder to wait in')
  assert.deepEqual(gateway.railWarnings, [
    'no EFT rail (BANK_RAIL_DIR and BANK_RAIL_SFTP_URL are unset): EFT payouts stay Pending, ' +
    'their files waiting in /srv/bank/rail/outbound, and no status reports, returns or ' +
    'incoming payments arrive'])
  const both = loadConfig({ ...production, BANK_RAIL_DIR: '/srv/clearing', BANK_RAIL_GATEWAY_URL: 'https://gateway.clearing.example/rtc' })
  assert.deepEqual(both.railWarnings, [])
})

test('config - the sandbox keeps its rail folder in the data directory, and warns of nothing', () => {
  const sandbox = loadConfig({ BANK_DATA_DIR: '/srv/bank' })
  assert.equal(sandbox.sandbox, true)
  assert.equal(sandbox.rail.dir, '/srv/bank/rail')
  assert.deepEqual(sandbox.railWarnings, [])
  assert.equal(loadConfig({ DATABASE_URL: 'postgres://bank@localhost/bank', BANK_SANDBOX: 'true' })
    .rail.dir, `${process.cwd()}/.data/rail`)
})

const sftp_host_key = `SHA256:${'Ab+/'.repeat(10)}xyz`
const sftp_settings = { BANK_RAIL_SFTP_URL: 'sftp://bank@clearing.example:2222/exchange/pb',
  BANK_RAIL_SFTP_KEY_FILE: 'keys/rail_ed25519', BANK_RAIL_SFTP_HOST_KEY: sftp_host_key }

test('config - the SFTP rail: its server, the bank\'s key file and the host keys it trusts', () => {
  const { sftp, simulator } = loadConfig(sftp_settings).rail
  assert.deepEqual(sftp, { address: { host: 'clearing.example', port: 2222, username: 'bank',
    root: '/exchange/pb' }, keyFile: `${process.cwd()}/keys/rail_ed25519`,
  hostKeys: [sftp_host_key] })
  assert.equal(simulator, false,
    'with an SFTP server its clearing house answers, not the simulator')
  assert.equal(loadConfig({}).rail.sftp, undefined)
  const root = (url: string) => loadConfig({ ...sftp_settings, BANK_RAIL_SFTP_URL: url })
    .rail.sftp?.address
  assert.deepEqual(root('sftp://bank@ch.example'), { host: 'ch.example', port: 22,
    username: 'bank', root: '/' })
  assert.equal(root('sftp://bank@ch.example/~/pb/')?.root, 'pb', 'in the login folder')
  assert.equal(root('sftp://bank@ch.example/~')?.root, '.')
  assert.equal(root('sftp://bank%2Bpb@[::1]:22/x')?.username, 'bank+pb')
  assert.equal(root('sftp://bank@[::1]/x')?.host, '::1')
  const keys = loadConfig({ ...sftp_settings,
    BANK_RAIL_SFTP_HOST_KEY: ` ${sftp_host_key}, SHA256:${'z'.repeat(43)} ` }).rail.sftp?.hostKeys
  assert.deepEqual(keys, [sftp_host_key, `SHA256:${'z'.repeat(43)}`], 'a key being changed')
})

test('config - the SFTP settings are refused incomplete, naming what is missing', () => {
  assert.throws(() => loadConfig({ BANK_RAIL_SFTP_URL: sftp_settings.BANK_RAIL_SFTP_URL }),
    /BANK_RAIL_SFTP_URL is set without BANK_RAIL_SFTP_KEY_FILE and BANK_RAIL_SFTP_HOST_KEY: the SFTP rail needs all three/)
  assert.throws(() => loadConfig({ ...sftp_settings, BANK_RAIL_SFTP_HOST_KEY: undefined }),
    /BANK_RAIL_SFTP_URL and BANK_RAIL_SFTP_KEY_FILE are set without BANK_RAIL_SFTP_HOST_KEY/)
  assert.throws(() => loadConfig({ ...sftp_settings, BANK_RAIL_SFTP_KEY_FILE: undefined }),
    /set without BANK_RAIL_SFTP_KEY_FILE:/)
  assert.throws(() => loadConfig({ BANK_RAIL_SFTP_KEY_FILE: 'k',
    BANK_RAIL_SFTP_HOST_KEY: sftp_host_key }),
    /BANK_RAIL_SFTP_KEY_FILE and BANK_RAIL_SFTP_HOST_KEY are set without BANK_RAIL_SFTP_URL/)
  assert.throws(() => loadConfig({ ...sftp_settings, BANK_RAIL_SIMULATOR: 'true' }),
    /BANK_RAIL_SIMULATOR=true cannot run with BANK_RAIL_SFTP_URL/)
  assert.equal(loadConfig({ ...sftp_settings, BANK_RAIL_SIMULATOR: 'false' }).rail.simulator, false)
})

test('config - a malformed SFTP URL or host key is refused, and a URL is never echoed', () => {
  const refused = (url: string, reason: RegExp) => assert.throws(
    () => loadConfig({ ...sftp_settings, BANK_RAIL_SFTP_URL: url }), (error: Error) => {
      assert.match(error.message, /BANK_RAIL_SFTP_URL is not valid: /)
      assert.match(error.message, reason)
      assert.ok(!error.message.includes(url), 'the URL may hold a password')
      return true
    })
  refused('sftp://bank:hunter2@ch.example/pb', /must carry no password/)
  refused('https://bank@ch.example/pb', /must start with sftp:\/\//)
  refused('sftp://ch.example/pb', /must name the user/)
  refused('sftp://bank@ch.example/pb?x=1', /no query/)
  refused('sftp://bank@ch.example/pb%2F..%2Fother', /must not climb/)
  refused('sftp://bank@ch.example/pb%zz', /a % that is not followed by two hex digits/)
  refused('clearing.example', /must be sftp:\/\/user@host\[:port\]\/remote-root/)
  const badKey = (value: string) => assert.throws(() => loadConfig({ ...sftp_settings,
    BANK_RAIL_SFTP_HOST_KEY: value }), /BANK_RAIL_SFTP_HOST_KEY=.* is not valid: .*SHA256:/)
  badKey(`MD5:${'a'.repeat(43)}`)
  badKey(`SHA256:${'A'.repeat(42)}`)
  badKey(`SHA256:${'A'.repeat(44)}`)
  badKey(`${sftp_host_key},SHA256:short`)
  badKey(' , ')
})
