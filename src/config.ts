import path from 'node:path'
import { z } from 'zod'

// Every setting, typed, read from the environment once, with defaults that run embedded
// (PGlite in ./.data and a NATS server found or started on loopback). Units come last in
// names (`_ms`, `_bytes`, `_max`).

const settings = z.object({
  NATS_URL: z.string().optional(),
  DATABASE_URL: z.string().optional(),
  BANK_DATA_DIR: z.string().default('./.data'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BANK_SERVICE_NAME: z.string().regex(/^[A-Za-z0-9_-]+$/).default('partner-bank'),
  BANK_QUEUE_GROUP: z.string().regex(/^[A-Za-z0-9_.-]+$/).default('partner-bank'),
  BANK_REQUEST_BYTES_MAX: z.coerce.number().int().min(1024).max(1048576).default(65536),
  BANK_DB_POOL_MAX: z.coerce.number().int().min(1).max(200).default(20),
  BANK_DEFAULT_COUNTRY: z.string().regex(/^[A-Z]{3}$/).default('ZAF'),
  BANK_ACCOUNT_NUMBER_FIRST: z.coerce.number().int().min(1).max(99_999_999).default(10_000_001),
  BANK_ACCOUNT_NUMBER_LAST: z.coerce.number().int().min(1).max(99_999_999).default(99_999_999),
  BANK_SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(120_000).default(10_000),
  BANK_BOOTSTRAP_OPERATOR: z.enum(['true', 'false']).default('true'),
})

export interface Config {
  natsUrl: string | undefined
  databaseUrl: string | undefined
  dataDir: string
  logLevel: string
  serviceName: string
  queueGroup: string
  requestBytesMax: number
  dbPoolMax: number
  defaultCountry: string
  accountNumberFirst: number
  accountNumberLast: number
  shutdownGraceMs: number
  bootstrapOperator: boolean
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = settings.safeParse(env)
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')
    throw new Error(`invalid configuration: ${problems}`)
  }
  const s = parsed.data
  if (s.BANK_ACCOUNT_NUMBER_FIRST > s.BANK_ACCOUNT_NUMBER_LAST) {
    throw new Error('invalid configuration: BANK_ACCOUNT_NUMBER_FIRST is above BANK_ACCOUNT_NUMBER_LAST')
  }
  return {
    natsUrl: s.NATS_URL || undefined,
    databaseUrl: s.DATABASE_URL || undefined,
    dataDir: path.resolve(s.BANK_DATA_DIR),
    logLevel: s.LOG_LEVEL,
    serviceName: s.BANK_SERVICE_NAME,
    queueGroup: s.BANK_QUEUE_GROUP,
    requestBytesMax: s.BANK_REQUEST_BYTES_MAX,
    dbPoolMax: s.BANK_DB_POOL_MAX,
    defaultCountry: s.BANK_DEFAULT_COUNTRY,
    accountNumberFirst: s.BANK_ACCOUNT_NUMBER_FIRST,
    accountNumberLast: s.BANK_ACCOUNT_NUMBER_LAST,
    shutdownGraceMs: s.BANK_SHUTDOWN_GRACE_MS,
    bootstrapOperator: s.BANK_BOOTSTRAP_OPERATOR === 'true',
  }
}
