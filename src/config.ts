import path from 'node:path'
import { z } from 'zod'
import { smtpUrlProblem } from './notify/smtp-notifier.ts'
import { burst_max, requests_per_second_max } from './limits/limits-contract.ts'
import { natsAuthFromEnv, natsAuthProblems, type NatsAuth } from './nats/nats-connect.ts'
import { database_bounds_default as db_bounds, type DatabaseBounds } from './db/bounds.ts'
import { parseHostKeys, parseSftpUrl, type SftpAddress } from './rails/sftp-settings.ts'

// Every setting, typed, read from the environment once, with defaults that run embedded
// (PGlite in ./.data and a NATS server found or started on loopback). Units come last in
// names (`_ms`, `_bytes`, `_max`).

export const settings = z.object({
  NATS_URL: z.string().optional(),
  /** Logging in to NATS (src/nats/nats-connect.ts): at most one way of the four. */
  NATS_CREDS: z.string().optional(),
  NATS_NKEY: z.string().optional(),
  NATS_USER: z.string().optional(),
  NATS_PASSWORD: z.string().optional(),
  NATS_TOKEN: z.string().optional(),
  NATS_TLS_CA: z.string().optional(),
  NATS_TLS_CERT: z.string().optional(),
  NATS_TLS_KEY: z.string().optional(),
  DATABASE_URL: z.string().optional(),
  BANK_DATA_DIR: z.string().default('./.data'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BANK_SERVICE_NAME: z.string().regex(/^[A-Za-z0-9_-]+$/).default('partner-bank'),
  BANK_QUEUE_GROUP: z.string().regex(/^[A-Za-z0-9_.-]+$/).default('partner-bank'),
  BANK_REQUEST_BYTES_MAX: z.coerce.number().int().min(1024).max(1048576).default(65536),
  BANK_DB_POOL_MAX: z.coerce.number().int().min(1).max(200).default(20),
  /** Every wait on PostgreSQL bounded (src/db/bounds.ts, docs/operations.md). */
  BANK_DB_STATEMENT_TIMEOUT_MS: msSetting(100, 3_600_000, db_bounds.statement_timeout_ms),
  BANK_DB_LOCK_TIMEOUT_MS: msSetting(100, 3_600_000, db_bounds.lock_timeout_ms),
  BANK_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: msSetting(
    1000,
    3_600_000,
    db_bounds.idle_in_transaction_timeout_ms,
  ),
  BANK_DB_QUERY_TIMEOUT_MS: msSetting(200, 3_600_000, db_bounds.query_timeout_ms),
  BANK_DB_CONNECT_TIMEOUT_MS: msSetting(100, 120_000, db_bounds.connect_timeout_ms),
  BANK_DB_KEEPALIVE_MS: msSetting(1000, 3_600_000, db_bounds.keepalive_idle_ms),
  BANK_DEFAULT_COUNTRY: z.string().regex(/^[A-Z]{3}$/).default('ZAF'),
  BANK_CARD_BIN: z.string().regex(/^[1-9]\d{5}$/, { error: 'must be 6 digits, the first not 0' }).default('499999'),
  BANK_ACCOUNT_NUMBER_FIRST: z.coerce.number().int().min(1).max(99_999_999).default(10_000_001),
  BANK_ACCOUNT_NUMBER_LAST: z.coerce.number().int().min(1).max(99_999_999).default(99_999_999),
  BANK_SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(120_000).default(10_000),
  BANK_BOOTSTRAP_OPERATOR: z.enum(['true', 'false']).default('true'),
  BANK_CREDENTIAL_CACHE_TTL_MS: z.coerce.number().int().min(0).max(60_000).default(5_000),
  /**
   * Each credential's request budget unless an operator gave its partner one
   * (docs/guides/wire-conventions.md).
   */
  BANK_RATE_PER_SECOND: z.coerce.number().int().min(1).max(requests_per_second_max).default(200),
  BANK_RATE_BURST: z.coerce.number().int().min(1).max(burst_max).default(400),
  /** Each card network credential's request budget (docs/guides/cards.md). */
  BANK_CARD_NETWORK_RATE_PER_SECOND: z.coerce.number().int().min(1).max(requests_per_second_max)
    .default(5_000),
  BANK_CARD_NETWORK_RATE_BURST: z.coerce.number().int().min(1).max(burst_max).default(10_000),
  /**
   * Per entity: wrong bulk PINs in any rolling hour, and batches waiting in pending_otp
   * (docs/guides/bulk-payments.md).
   */
  BANK_BULK_WRONG_PINS_MAX: z.coerce.number().int().min(1).max(1_000_000).default(10),
  BANK_BULK_PENDING_BATCHES_MAX: z.coerce.number().int().min(1).max(1_000_000).default(20),
  BANK_FEE_EFT_CENTS: z.coerce.number().int().min(0).max(1_000_000).default(250),
  BANK_FEE_RTC_CENTS: z.coerce.number().int().min(0).max(1_000_000).default(700),
  BANK_FEE_INTERNAL_CENTS: z.coerce.number().int().min(0).max(1_000_000).default(0),
  /**
   * Bank charges per successful debit-order collection, kept from the collected amount (fee
   * income).
   */
  BANK_FEE_DEBIT_ORDER_CENTS: z.coerce.number().int().min(0).max(1_000_000).default(350),
  /** Debit-order collection runs on business days (off: only `bank debit run`). */
  BANK_DEBIT_SCHEDULE: z.enum(['on', 'off']).default('on'),
  /**
   * Days the bytes of rejected or superseded KYC/KYB documents are kept after the decision (0:
   * deleted at the next daily sweep).
   */
  /** Serve Prometheus metrics at http://<BANK_METRICS_HOST>:<port>/metrics (unset: off; 0: any free port). */
  BANK_METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  BANK_METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  /** Serve the operators' console at http://<BANK_CONSOLE_HOST_NAME>:<port>/ (unset: off; 0: any port). */
  BANK_CONSOLE_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  BANK_CONSOLE_HOST: z.string().min(1).default('127.0.0.1'),
  /** The host name the console answers to (its cookie's host): see docs/operators/console.md. */
  BANK_CONSOLE_HOST_NAME: z.string().regex(/^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/,
    'a host name (letters, digits, dots and hyphens)').default('bank-console.localhost'),
  BANK_DOCUMENT_RETENTION_DAYS: z.coerce.number().int().min(0).max(3650).default(180),
  /** Collections one run submits to the debit rail in one batch (and books in one transaction). */
  BANK_DEBIT_BATCH_MAX: z.coerce.number().int().min(1).max(5000).default(500),
  BANK_TRANSFER_KEY_WINDOW_MS: z.coerce.number().int().min(60_000).max(90 * 86_400_000).default(
    86_400_000),
  BANK_LEDGER_BATCH_JOBS_MAX: z.coerce.number().int().min(1).max(2000).default(500),
  BANK_LEDGER_BATCHES_IN_FLIGHT_MAX: z.coerce.number().int().min(1).max(16).default(2),
  BANK_LEDGER_OVERLAP_JOBS_MIN: z.coerce.number().int().min(1).max(2000).default(48),
  BANK_LEDGER_ACCOUNT_BATCHES_MAX: z.coerce.number().int().min(1).max(2).default(2),
  BANK_LEDGER_QUEUE_JOBS_MAX: z.coerce.number().int().min(1).max(1_000_000).default(20_000),
  BANK_EFT_CYCLES_SAST: z
    .string()
    .regex(/^([01]\d|2[0-3]):[0-5]\d(,([01]\d|2[0-3]):[0-5]\d)*$/, { error: 'must be HH:MM times (00:00-23:59), comma-separated' })
    .default('07:00,10:00,13:00,16:00'),
  BANK_CLEARING_SCHEDULE: z.enum(['on', 'off']).default('on'),
  BANK_JOBS_POLL_MS: z.coerce.number().int().min(100).max(60_000).default(1000),
  BANK_JOBS_CONCURRENCY_MAX: z.coerce.number().int().min(1).max(64).default(4),
  BANK_JOBS_EXCLUSIVE_WAIT_MS: z.coerce.number().int().min(0).max(600_000).default(30_000),
  /** Webhook delivery jobs of one partner running at once, across all instances. */
  BANK_WEBHOOK_PARTNER_SLOTS_MAX: z.coerce.number().int().min(1).max(64).default(1),
  /**
   * Webhook deliveries running at once on one instance, in a pool of their own beside
   * BANK_JOBS_CONCURRENCY_MAX (network waits: memory, not CPU).
   */
  BANK_WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(4096).default(256),
  BANK_RTC_RECOVERY_AFTER_MS: z.coerce.number().int().min(10_000).max(86_400_000).default(60_000),
  BANK_CLEARING_CHUNK_MAX: z.coerce.number().int().min(1).max(100_000).default(500),
  /**
   * A payout sent to the clearing house and still unanswered this many minutes later is listed
   * for operators (`ops.rails.unanswered`, the console's Rails page).
   */
  BANK_RAIL_UNANSWERED_AFTER_MINUTES: z.coerce.number().int().min(1).max(43_200).default(240),
  /**
   * An active account with no transaction its customer made (a payout, an internal payment out,
   * a bulk batch, a card payment) for this many days becomes `dormant` (the daily
   * `accounts.dormancy` job); its next debit then needs an operator to reactivate it.
   */
  BANK_DORMANT_AFTER_DAYS: z.coerce.number().int().min(1).max(3_650).default(365),
  /**
   * Sanctions screening (docs/operators/financial-crime.md): a name whose score against a
   * list entry reaches the review score is a hit; above the confirm score a hit looks
   * confirmed, and clearing it takes a second operator. Scores run from 0 to 1.
   */
  BANK_SCREENING_REVIEW_SCORE: z.coerce.number().min(0.5).max(1).default(0.88),
  BANK_SCREENING_CONFIRM_SCORE: z.coerce.number().min(0.5).max(1).default(0.97),
  /**
   * The bank as the FIC's goAML knows it, for suspicious-transaction reports: its reporting
   * entity id (`rentity_id`), the goAML user who files (`reporting_user_code`) and the
   * reporting office as `<address>, <city>`. A report is filed only when all three are set.
   */
  BANK_GOAML_RENTITY_ID: z.coerce.number().int().min(1).max(2_147_483_647).optional(),
  BANK_GOAML_REPORTING_USER: z.string().min(4).max(50).optional(),
  BANK_GOAML_LOCATION: z.string().regex(/^[^,]{1,100}, [^,]{1,100}$/,
    { error: 'must be "<address>, <city>"' }).optional(),
  /**
   * Deposits and reversals above this many cents wait for a second operator (0: off). Default
   * R50,000.00 in production, off in the sandbox.
   */
  BANK_DUAL_CONTROL_CENTS: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
  /**
   * Declared holidays beyond the list the bank ships (src/calendar/sa-calendar.ts), added to it.
   */
  BANK_DECLARED_HOLIDAYS: z
    .string()
    .regex(/^(\d{4}-\d{2}-\d{2}(,\d{4}-\d{2}-\d{2})*)?$/, { error: 'must be YYYY-MM-DD dates, comma-separated' })
    .refine((value) => value.split(',').filter(Boolean).every(isCalendarDate),
      { error: 'must be real dates (YYYY-MM-DD)' })
    .default(''),
  // Where e-mail goes (one-time PINs, payment advices): unset, the simulated notifier records them.
  BANK_SMTP_URL: z
    .string()
    .refine((value) => smtpUrlProblem(value) === undefined, { error: 'must be smtp://[user:password@]host[:port] or smtps://…' })
    .optional(),
  BANK_MAIL_FROM: z.string().regex(/^[^\s@]+@[^\s@]+$/, { error: 'must be an e-mail address' }).default('bank@localhost'),
  BANK_SMTP_TIMEOUT_MS: z.coerce.number().int().min(1000).max(120_000).default(10_000),
  // No default here: the default depends on the storage (see loadConfig).
  BANK_SANDBOX: z.enum(['true', 'false']).optional(),
  /**
   * The folder the bank exchanges ISO 20022 files with the clearing house through (outbound/,
   * inbound/, archive/); default `<data dir>/rail`. Instances of one bank must share it.
   * Production starts only with a rail configured: this, BANK_RAIL_SFTP_URL or
   * BANK_RAIL_GATEWAY_URL (loadConfig).
   */
  BANK_RAIL_DIR: z.string().min(1).optional(),
  /**
   * The sandbox's clearing-house simulator answers the files in BANK_RAIL_DIR: on by default
   * in the sandbox; production refuses it.
   */
  BANK_RAIL_SIMULATOR: z.enum(['true', 'false']).optional(),
  /**
   * The clearing house's gateway for real-time payments (RTC): each pacs.008 and pacs.028 is
   * POSTed to it. Unset in the sandbox, the clearing-house simulator answers.
   */
  BANK_RAIL_GATEWAY_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** How long an RTC waits for the gateway's answer; none by then leaves it Pending. */
  BANK_RAIL_GATEWAY_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  /**
   * The clearing house's SFTP server, `sftp://user@host[:port]/remote-root`: each pass carries
   * BANK_RAIL_DIR's outbound/ to the root's inbound/, and its outbound/ into BANK_RAIL_DIR's
   * inbound/ (src/rails/sftp-carrier.ts). Needs the two settings below.
   */
  BANK_RAIL_SFTP_URL: z.string().superRefine((value, context) => {
    const parsed = parseSftpUrl(value)
    if ('problem' in parsed) context.addIssue({ code: 'custom', message: parsed.problem })
  }).optional(),
  /** The bank's private key for the SFTP server (no passphrase), read at start, never logged. */
  BANK_RAIL_SFTP_KEY_FILE: z.string().min(1).optional(),
  /**
   * The SFTP server's host key fingerprint, `SHA256:…` (several: comma-separated): the bank
   * connects to no other.
   */
  BANK_RAIL_SFTP_HOST_KEY: z.string().superRefine((value, context) => {
    const parsed = parseHostKeys(value)
    if ('problem' in parsed) context.addIssue({ code: 'custom', message: parsed.problem })
  }).optional(),
  /** The bank's branch code (its member id at the clearing house, six digits). */
  BANK_BRANCH_CODE: z.string().regex(/^[0-9]{6}$/, 'six digits').default('999000'),
  /** The bank's settlement account at the clearing house (its statements' account). */
  BANK_SETTLEMENT_ACCOUNT: z.string().regex(/^[A-Za-z0-9-]{1,34}$/).default('PB-SETTLEMENT-01'),
  // The HMAC key of bulk payments' one-time PINs: base64 of 32 bytes, the same on every instance.
  BANK_OTP_KEY: z
    .string()
    .refine((value) => /^[A-Za-z0-9+/]+={0,2}$/.test(value) && Buffer.from(value, 'base64').length === 32, {
      error: 'must be base64 of 32 bytes (e.g. `openssl rand -base64 32`)',
    })
    .optional(),
  // The key that seals partners' webhook signing secrets at rest: base64 of 32 bytes.
  BANK_SECRETS_KEY: z
    .string()
    .refine((value) => Buffer.from(value, 'base64').length === 32 && /^[A-Za-z0-9+/]+={0,2}$/.test(value), {
      error: 'must be base64 of 32 bytes (e.g. `openssl rand -base64 32`)',
    })
    .optional(),
})

export interface Config {
  natsUrl: string | undefined
  /** How to log in to NATS (credentials file, nkey, user and password, or token; TLS files). */
  natsAuth: NatsAuth
  databaseUrl: string | undefined
  dataDir: string
  logLevel: string
  serviceName: string
  queueGroup: string
  requestBytesMax: number
  dbPoolMax: number
  /** How long each wait on PostgreSQL may last (src/db/bounds.ts). */
  dbBounds: DatabaseBounds
  defaultCountry: string
  accountNumberFirst: number
  accountNumberLast: number
  shutdownGraceMs: number
  bootstrapOperator: boolean
  credentialCacheTtlMs: number
  /** Each credential's request budget, unless an operator gave its partner limits of its own. */
  rateLimits: { requests_per_second: number; burst: number }
  /** A card network credential's request budget. */
  cardNetworkRateLimits: { requests_per_second: number; burst: number }
  bulkWrongPinsMax: number
  bulkPendingBatchesMax: number
  fees: { EFT: bigint; RTC: bigint; INTERNAL: bigint }
  /** Bank charges per successful debit-order collection (cents). */
  debitOrderFeeCents: bigint
  /** Plan a debit-order collection run on each business day (off: only on demand). */
  debitSchedule: boolean
  /** Days the bytes of rejected or superseded KYC/KYB documents are kept after the decision. */
  documentRetentionDays: number
  /** Where Prometheus metrics are served; undefined: not served. */
  metrics: { host: string; port: number } | undefined
  /** Where the operators' web console is served; undefined: not served. */
  console: { host: string; port: number } | undefined
  debitBatchMax: number
  transferKeyWindowMs: number
  ledgerBatchJobsMax: number
  ledgerBatchesInFlightMax: number
  ledgerOverlapJobsMin: number
  /**
   * Payment batches of one account written at once (1 or 2; ledger/ledger-writer.ts, paymentBatch).
   */
  ledgerAccountBatchesMax: number
  ledgerQueueJobsMax: number
  /** EFT clearing cycles, minutes after 00:00 SAST on business days. */
  eftCyclesSast: number[]
  clearingSchedule: boolean
  /** How often an instance looks for due jobs and new outbox events. */
  jobsPollMs: number
  /** Jobs running at once on one instance. */
  jobsConcurrencyMax: number
  /** How long a run started on demand waits for a running job of its exclusive group. */
  jobsExclusiveWaitMs: number
  /**
   * Webhook delivery jobs of one partner running at once, across all instances (never all of one
   * instance's).
   */
  webhookPartnerSlotsMax: number
  /** Webhook deliveries running at once on one instance (their own pool of the job runner). */
  webhookConcurrency: number
  clearingChunkMax: number
  /**
   * Minutes after which a payout sent and still unanswered is listed for operators
   * (`ops.rails.unanswered`; BANK_RAIL_UNANSWERED_AFTER_MINUTES).
   */
  railUnansweredAfterMinutes: number
  /** Days without customer activity after which an active account becomes dormant. */
  dormantAfterDays: number
  /** Sanctions screening's scores (BANK_SCREENING_REVIEW_SCORE, _CONFIRM_SCORE). */
  screening: { reviewScore: number; confirmScore: number }
  /** The bank's goAML reporting entity, for suspicious-transaction reports (all or none set). */
  goaml: { rentityId: number; reportingUser: string; address: string; city: string } | undefined
  /**
   * An RTC still Pending this long after it was taken lost its settle step; clearing asks the rail
   * again.
   */
  rtcRecoveryAfterMs: number
  /** Declared holidays added to the shipped list (BANK_DECLARED_HOLIDAYS). */
  declaredHolidays: Set<string>
  /**
   * Deposits and reversals above this many cents need a second operator's approval; undefined:
   * never.
   */
  dualControlCents: bigint | undefined
  /**
   * Sandbox mode: operators may read OTPs and notifier messages and move the shared clock
   * (`ops.sandbox.*`); production refuses those subjects. On by default with embedded
   * storage, off by default with PostgreSQL.
   */
  sandbox: boolean
  /**
   * What start logs as warnings: in production, the payouts that no configured rail carries
   * (EFT without BANK_RAIL_DIR or BANK_RAIL_SFTP_URL, RTC without BANK_RAIL_GATEWAY_URL).
   */
  railWarnings: string[]
  /**
   * The key one-time PINs are hashed with (HMAC-SHA256). Unset, each process makes its own
   * at start: a PIN then verifies only on the instance that issued it, until it restarts.
   */
  otpKey: Buffer | undefined
  /**
   * The key (32 bytes) that seals webhook signing secrets; unset, the bank keeps one in
   * `<data dir>/secrets-key`. Instances sharing one PostgreSQL must share this key.
   */
  secretsKey: Buffer | undefined
  /** The first six digits (the issuer's BIN) of the card numbers the bank issues. */
  cardBin: string
  /** The ISO 20022 rail: its folder, the sandbox's simulator, the bank's clearing identity. */
  rail: { dir: string; simulator: boolean; branchCode: string; settlementAccount: string;
    gatewayUrl: string | undefined; gatewayTimeoutMs: number; sftp: RailSftpConfig | undefined }
  /** E-mail through this SMTP server; unset, the simulated notifier records messages instead. */
  smtp: { url: string; from: string; timeout_ms: number } | undefined
}

/** Every setting the bank reads from its environment (the deployment files name only these). */
export const settingNames: readonly string[] = Object.keys(settings.shape)

/**
 * The bank's settings from `env`. `railRequired: false` is for a tool that opens only the store
 * (`bank nats init`), not the bank: production then loads without a rail.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env,
  { railRequired = true }: { railRequired?: boolean } = {}): Config {
  const parsed = settings.safeParse(env)
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => settingProblem(issue, env)).join('; ')
    throw new Error(`invalid configuration: ${problems}`)
  }
  const s = parsed.data
  const natsAuth = natsAuthFromEnv(env)
  const natsProblems = natsAuthProblems(natsAuth)
  if (natsProblems.length > 0) throw new Error(`invalid configuration: ${natsProblems.join('; ')}`)
  checkBounds(s)
  if (s.BANK_SCREENING_CONFIRM_SCORE < s.BANK_SCREENING_REVIEW_SCORE) throw new Error(
    'invalid configuration: BANK_SCREENING_CONFIRM_SCORE must be at least ' +
    'BANK_SCREENING_REVIEW_SCORE')
  const sandbox = s.BANK_SANDBOX === undefined ? !s.DATABASE_URL : s.BANK_SANDBOX === 'true'
  checkRailSftp(s)
  if (!sandbox && s.BANK_RAIL_SIMULATOR === 'true') {
    throw new Error('invalid configuration: BANK_RAIL_SIMULATOR is for the sandbox only; ' +
      'in production a clearing house answers the files in BANK_RAIL_DIR')
  }
  const banking = bankingConfig(s)
  const rail = railsConfigured(s)
  if (!sandbox && railRequired && !rail.eft && !rail.rtc) throw new Error(noRailProblem(s))
  return { ...connectionConfig(s, natsAuth), ...banking, ...workConfig(s),
    railWarnings: sandbox ? [] : railWarnings(rail, banking.rail.dir) }
}

/**
 * Which payouts have a rail configured: EFT by a folder (BANK_RAIL_DIR, set, not defaulted) or
 * an SFTP server (BANK_RAIL_SFTP_URL), RTC by the gateway (BANK_RAIL_GATEWAY_URL).
 */
function railsConfigured(s: Settings) {
  return { eft: s.BANK_RAIL_DIR !== undefined || Boolean(s.BANK_RAIL_SFTP_URL),
    rtc: s.BANK_RAIL_GATEWAY_URL !== undefined }
}

/** Production without any rail: which settings to set, and why this is production. */
function noRailProblem(s: Settings): string {
  const why = s.BANK_SANDBOX === undefined
    ? ' (production because DATABASE_URL is set and BANK_SANDBOX is not; BANK_SANDBOX=true ' +
      'runs a sandbox, with its simulated clearing house)'
    : ''
  return 'invalid configuration: production needs a rail: set BANK_RAIL_DIR (the folder ' +
    'shared with the clearing house), BANK_RAIL_SFTP_URL (its SFTP server) or ' +
    `BANK_RAIL_GATEWAY_URL (its RTC gateway)${why}`
}

/** Production with one rail of the two: the payouts the other would carry stay Pending. */
function railWarnings(rail: { eft: boolean; rtc: boolean }, dir: string): string[] {
  const warnings: string[] = []
  if (!rail.eft) {
    warnings.push('no EFT rail (BANK_RAIL_DIR and BANK_RAIL_SFTP_URL are unset): EFT payouts ' +
      `stay Pending, their files waiting in ${path.join(dir, 'outbound')}, and no status ` +
      'reports, returns or incoming payments arrive')
  }
  if (!rail.rtc) {
    warnings.push('no RTC gateway (BANK_RAIL_GATEWAY_URL is unset): RTC payouts stay Pending ' +
      'until one is set')
  }
  return warnings
}

type Settings = z.output<typeof settings>

/** The clearing house's SFTP server (sftp-carrier.ts): where, the bank's key, its host keys. */
export interface RailSftpConfig {
  address: SftpAddress
  /** Resolved from the working directory; read at start by the rails module. */
  keyFile: string
  hostKeys: string[]
}

/**
 * The SFTP settings go together: a URL needs the bank's key and the server's host key (the
 * bank never trusts an unknown host key), and either without the URL is a mistake. The
 * sandbox's simulator answers in the local folder, so it cannot run beside a real server.
 */
function checkRailSftp(s: Settings): void {
  const named = { BANK_RAIL_SFTP_URL: s.BANK_RAIL_SFTP_URL,
    BANK_RAIL_SFTP_KEY_FILE: s.BANK_RAIL_SFTP_KEY_FILE,
    BANK_RAIL_SFTP_HOST_KEY: s.BANK_RAIL_SFTP_HOST_KEY }
  const given = Object.keys(named).filter((name) => named[name as keyof typeof named])
  if (given.length === 0) return
  const missing = Object.keys(named).filter((name) => !given.includes(name))
  if (missing.length > 0) {
    const verb = given.length > 1 ? 'are' : 'is'
    throw new Error(`invalid configuration: ${given.join(' and ')} ${verb} set without` +
      ` ${missing.join(' and ')}: the SFTP rail needs all three (the server's URL, ` +
      'the bank\'s private key file, and the server\'s host key fingerprint, SHA256:…)')
  }
  if (s.BANK_RAIL_SIMULATOR === 'true') {
    throw new Error('invalid configuration: BANK_RAIL_SIMULATOR=true cannot run with ' +
      'BANK_RAIL_SFTP_URL: the simulator answers the bank\'s files in the local folder, ' +
      'before they could reach the clearing house on the SFTP server; set one or the other')
  }
}

function railSftpConfig(s: Settings): RailSftpConfig | undefined {
  if (!s.BANK_RAIL_SFTP_URL || !s.BANK_RAIL_SFTP_KEY_FILE || !s.BANK_RAIL_SFTP_HOST_KEY) {
    return undefined
  }
  const address = parseSftpUrl(s.BANK_RAIL_SFTP_URL)
  const hostKeys = parseHostKeys(s.BANK_RAIL_SFTP_HOST_KEY)
  // Checked by the schema above: a problem here is the program's mistake.
  if ('problem' in address || 'problem' in hostKeys) throw new Error('SFTP settings unchecked')
  return { address, keyFile: path.resolve(s.BANK_RAIL_SFTP_KEY_FILE), hostKeys }
}

/** Settings that are each valid but contradict one another. */
function checkBounds(s: Settings) {
  if (s.BANK_ACCOUNT_NUMBER_FIRST > s.BANK_ACCOUNT_NUMBER_LAST) {
    throw new Error(
      'invalid configuration: BANK_ACCOUNT_NUMBER_FIRST is above BANK_ACCOUNT_NUMBER_LAST')
  }
  if (s.BANK_DB_QUERY_TIMEOUT_MS <= s.BANK_DB_STATEMENT_TIMEOUT_MS) {
    throw new Error(
      'invalid configuration: BANK_DB_QUERY_TIMEOUT_MS must be above ' +
        'BANK_DB_STATEMENT_TIMEOUT_MS (the server cancels a slow statement first; ' +
        'the client bound is for a server that does not answer at all)',
    )
  }
}

/** Where the bank connects and listens: NATS, the database, the data directory, the log. */
function connectionConfig(s: Settings, natsAuth: NatsAuth) {
  return {
    natsUrl: s.NATS_URL || undefined,
    natsAuth,
    databaseUrl: s.DATABASE_URL || undefined,
    dataDir: path.resolve(s.BANK_DATA_DIR),
    logLevel: s.LOG_LEVEL,
    serviceName: s.BANK_SERVICE_NAME,
    queueGroup: s.BANK_QUEUE_GROUP,
    requestBytesMax: s.BANK_REQUEST_BYTES_MAX,
    dbPoolMax: s.BANK_DB_POOL_MAX,
    dbBounds: {
      statement_timeout_ms: s.BANK_DB_STATEMENT_TIMEOUT_MS,
      lock_timeout_ms: s.BANK_DB_LOCK_TIMEOUT_MS,
      idle_in_transaction_timeout_ms: s.BANK_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS,
      query_timeout_ms: s.BANK_DB_QUERY_TIMEOUT_MS,
      connect_timeout_ms: s.BANK_DB_CONNECT_TIMEOUT_MS,
      keepalive_idle_ms: s.BANK_DB_KEEPALIVE_MS,
    },
    metrics: s.BANK_METRICS_PORT === undefined ? undefined : { host: s.BANK_METRICS_HOST,
      port: s.BANK_METRICS_PORT },
    console:
      s.BANK_CONSOLE_PORT === undefined
        ? undefined
        : { host: s.BANK_CONSOLE_HOST, port: s.BANK_CONSOLE_PORT,
          hostName: s.BANK_CONSOLE_HOST_NAME.toLowerCase() },
    smtp: s.BANK_SMTP_URL ? { url: s.BANK_SMTP_URL, from: s.BANK_MAIL_FROM,
      timeout_ms: s.BANK_SMTP_TIMEOUT_MS } : undefined,
  }
}

/** The bank's rules: numbers, fees, limits, sandbox, dual control and keys. */
function bankingConfig(s: Settings) {
  const sandbox = s.BANK_SANDBOX === undefined ? !s.DATABASE_URL : s.BANK_SANDBOX === 'true'
  return {
    defaultCountry: s.BANK_DEFAULT_COUNTRY,
    cardBin: s.BANK_CARD_BIN,
    accountNumberFirst: s.BANK_ACCOUNT_NUMBER_FIRST,
    accountNumberLast: s.BANK_ACCOUNT_NUMBER_LAST,
    shutdownGraceMs: s.BANK_SHUTDOWN_GRACE_MS,
    bootstrapOperator: s.BANK_BOOTSTRAP_OPERATOR === 'true',
    credentialCacheTtlMs: s.BANK_CREDENTIAL_CACHE_TTL_MS,
    rateLimits: { requests_per_second: s.BANK_RATE_PER_SECOND, burst: s.BANK_RATE_BURST },
    cardNetworkRateLimits: { requests_per_second: s.BANK_CARD_NETWORK_RATE_PER_SECOND,
      burst: s.BANK_CARD_NETWORK_RATE_BURST },
    bulkWrongPinsMax: s.BANK_BULK_WRONG_PINS_MAX,
    bulkPendingBatchesMax: s.BANK_BULK_PENDING_BATCHES_MAX,
    fees: { EFT: BigInt(s.BANK_FEE_EFT_CENTS), RTC: BigInt(s.BANK_FEE_RTC_CENTS),
      INTERNAL: BigInt(s.BANK_FEE_INTERNAL_CENTS) },
    debitOrderFeeCents: BigInt(s.BANK_FEE_DEBIT_ORDER_CENTS),
    debitSchedule: s.BANK_DEBIT_SCHEDULE === 'on',
    documentRetentionDays: s.BANK_DOCUMENT_RETENTION_DAYS,
    declaredHolidays: new Set(s.BANK_DECLARED_HOLIDAYS.split(',').filter(Boolean)),
    sandbox,
    rail: {
      dir: path.resolve(s.BANK_RAIL_DIR ?? path.join(s.BANK_DATA_DIR, 'rail')),
      // With an SFTP server a real clearing house answers: the simulator is off unless asked.
      simulator: s.BANK_RAIL_SIMULATOR === undefined ? sandbox && !s.BANK_RAIL_SFTP_URL
        : s.BANK_RAIL_SIMULATOR === 'true',
      branchCode: s.BANK_BRANCH_CODE,
      settlementAccount: s.BANK_SETTLEMENT_ACCOUNT,
      gatewayUrl: s.BANK_RAIL_GATEWAY_URL,
      gatewayTimeoutMs: s.BANK_RAIL_GATEWAY_TIMEOUT_MS,
      sftp: railSftpConfig(s),
    },
    dualControlCents: dualControlCents(s.BANK_DUAL_CONTROL_CENTS, sandbox),
    otpKey: s.BANK_OTP_KEY ? Buffer.from(s.BANK_OTP_KEY, 'base64') : undefined,
    secretsKey: s.BANK_SECRETS_KEY ? Buffer.from(s.BANK_SECRETS_KEY, 'base64') : undefined,
  }
}

/** How the work is done: the ledger writer, clearing, jobs and webhooks. */
function workConfig(s: Settings) {
  return {
    debitBatchMax: s.BANK_DEBIT_BATCH_MAX,
    transferKeyWindowMs: s.BANK_TRANSFER_KEY_WINDOW_MS,
    ledgerBatchJobsMax: s.BANK_LEDGER_BATCH_JOBS_MAX,
    ledgerBatchesInFlightMax: s.BANK_LEDGER_BATCHES_IN_FLIGHT_MAX,
    ledgerOverlapJobsMin: s.BANK_LEDGER_OVERLAP_JOBS_MIN,
    ledgerAccountBatchesMax: s.BANK_LEDGER_ACCOUNT_BATCHES_MAX,
    ledgerQueueJobsMax: s.BANK_LEDGER_QUEUE_JOBS_MAX,
    eftCyclesSast: s.BANK_EFT_CYCLES_SAST.split(',')
      .map((t) => Number(t.slice(0, 2)) * 60 + Number(t.slice(3, 5)))
      .sort((a, b) => a - b),
    clearingSchedule: s.BANK_CLEARING_SCHEDULE === 'on',
    jobsPollMs: s.BANK_JOBS_POLL_MS,
    jobsConcurrencyMax: s.BANK_JOBS_CONCURRENCY_MAX,
    jobsExclusiveWaitMs: s.BANK_JOBS_EXCLUSIVE_WAIT_MS,
    webhookPartnerSlotsMax: s.BANK_WEBHOOK_PARTNER_SLOTS_MAX,
    webhookConcurrency: s.BANK_WEBHOOK_CONCURRENCY,
    clearingChunkMax: s.BANK_CLEARING_CHUNK_MAX,
    railUnansweredAfterMinutes: s.BANK_RAIL_UNANSWERED_AFTER_MINUTES,
    dormantAfterDays: s.BANK_DORMANT_AFTER_DAYS,
    screening: { reviewScore: s.BANK_SCREENING_REVIEW_SCORE,
      confirmScore: s.BANK_SCREENING_CONFIRM_SCORE },
    goaml: goamlOf(s.BANK_GOAML_RENTITY_ID, s.BANK_GOAML_REPORTING_USER, s.BANK_GOAML_LOCATION),
    rtcRecoveryAfterMs: s.BANK_RTC_RECOVERY_AFTER_MS,
  }
}

/** A whole number of milliseconds from `min` to `max`. */
function msSetting(min: number, max: number, fallback: number) {
  return z.coerce.number().int().min(min).max(max).default(fallback)
}

/** R50,000.00: the production default above which a deposit or reversal needs a second operator. */
export const dual_control_cents_default = 5_000_000n

function goamlOf(rentityId: number | undefined, reportingUser: string | undefined,
    location: string | undefined): Config['goaml'] {
  if (rentityId === undefined || reportingUser === undefined || location === undefined) {
    return undefined
  }
  const [address, city] = location.split(', ') as [string, string]
  return { rentityId, reportingUser, address, city }
}

function dualControlCents(setting: number | undefined, sandbox: boolean): bigint | undefined {
  if (setting === undefined) return sandbox ? undefined : dual_control_cents_default
  return setting === 0 ? undefined : BigInt(setting)
}

/** A YYYY-MM-DD that names a day of the calendar (not 2026-02-30). */
function isCalendarDate(date: string): boolean {
  const parsed = new Date(`${date}T00:00:00Z`)
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === date
}

/**
 * Settings whose values are secrets, or may hold one: their values are never repeated in an error.
 */
const secret_settings = new Set(['BANK_SECRETS_KEY', 'BANK_OTP_KEY', 'DATABASE_URL',
  'BANK_SMTP_URL', 'NATS_URL', 'NATS_PASSWORD', 'NATS_TOKEN', 'BANK_RAIL_SFTP_URL'])

/**
 * One bad setting in an operator's words: its name, the value given (unless secret), and what it
 * takes.
 */
function settingProblem(issue: z.core.$ZodIssue, env: NodeJS.ProcessEnv): string {
  const name = String(issue.path[0] ?? '')
  const given = env[name]
  // A secret (or a URL that may carry a password) is never echoed into a log or a terminal.
  const shown = given === undefined || secret_settings.has(name) ? ''
    : `=${JSON.stringify(given).slice(0, 60)}`
  const shape = settings.shape[name as keyof typeof settings.shape] as z.ZodType | undefined
  const schema = shape ? (z.toJSONSchema(shape, { io: 'input', unrepresentable: 'any' }) as {
    type?: string; enum?: unknown[]; minimum?: number; maximum?: number; anyOf?: Array<{
    type?: string; minimum?: number; maximum?: number }> }) : {}
  const numeric = schema.type === 'number' || schema.type === 'integer'
    || schema.anyOf?.some((s) => s.type === 'number' || s.type === 'integer')
  let expected = issue.message
  if (schema.enum) expected = `must be one of ${schema.enum.map(String).join(', ')}`
  else if (numeric) {
    const range = schema.anyOf?.find((s) => s.minimum !== undefined) ?? schema
    const bounds = range.minimum !== undefined && range.maximum !== undefined
      ? ` from ${range.minimum} to ${range.maximum}` : ''
    expected = `must be a whole number${bounds}`
  }
  return `${name}${shown} is not valid: ${expected}`
}
