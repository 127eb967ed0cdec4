import type { Kysely } from 'kysely'
import { AccountService } from './accounts/account-service.ts'
import { CredentialStore } from './auth/credential-store.ts'
import { systemClock, type Clock } from './clock.ts'
import type { Config } from './config.ts'
import type { Database } from './schema.ts'
import { EntityService } from './entities/entity-service.ts'
import { PartnerService } from './partners/partner-service.ts'
import { UserService } from './users/user-service.ts'
import { SouthAfricanCalendar } from './calendar/sa-calendar.ts'
import { LedgerService } from './ledger/ledger-service.ts'
import { LedgerWriter } from './ledger/ledger-writer.ts'
import type { Logger } from './logger.ts'
import type { Rail } from './rails/rail.ts'
import { SimulatedRail } from './rails/simulated-rail.ts'
import { ClearingService } from './transfers/clearing-service.ts'
import { JobRunner } from './jobs/job-runner.ts'
import { JobsService } from './jobs/jobs-service.ts'
import { EventDispatcher } from './events/index.ts'
import { TransactionService } from './transfers/transaction-service.ts'
import { TransferService } from './transfers/transfer-service.ts'
import { PaymentAdvices } from './transfers/payment-advice.ts'
import type { Notifier } from './notify/notifier.ts'
import { SimulatedNotifier } from './notify/simulated-notifier.ts'
import { SmtpNotifier } from './notify/smtp-notifier.ts'
import { BulkService } from './bulk/bulk-service.ts'
import { entity_limits_default } from './bulk/bulk-entity-limits.ts'
import { BulkProcessing } from './bulk/bulk-processing.ts'
import { SecretBox } from './secrets/secret-box.ts'
import { CardService } from './cards/card-service.ts'
import { CardNetwork } from './cards/card-network.ts'
import { card_authorization_desk } from './cards/card-authorizations.ts'
import { PartnerDecisions, type DecisionTransport } from './cards/card-decisions.ts'
import { WebhookSecrets } from './webhooks/webhook-secrets.ts'
import { HttpWebhookSender } from './webhooks/webhook-sender.ts'
import { WebhookService } from './webhooks/webhook-service.ts'
import { webhook_limits_default } from './webhooks/webhook-limits.ts'
import type { MovableClock } from './sandbox/sandbox-clock.ts'
import { SandboxService } from './sandbox/sandbox-service.ts'
import { SummaryService } from './summary/summary-service.ts'
import { DebitService } from './debit/debit-service.ts'
import { MandateService } from './debit/mandate-service.ts'
import type { MandateAuthenticator } from './debit/mandate-authenticator.ts'
import { DebitCollection } from './debit/debit-collection.ts'
import { railAuthenticator } from './debit/mandate-rail-authenticator.ts'
import type { DebitRail } from './rails/debit-rail.ts'
import { SimulatedDebitRail } from './rails/simulated-debit-rail.ts'
import { noDropbox, type Dropbox } from './kyc/dropbox.ts'
import { SimulatedCompanyRegistry, type CompanyRegistry } from './kyc/company-registry.ts'
import { KycService } from './kyc/kyc-service.ts'
import { KybService } from './kyc/kyb-service.ts'
import { DocumentRetention } from './kyc/document-retention.ts'
import { TransferKeyExpiry } from './transfers/transfer-key-expiry.ts'
import { BankMetrics } from './metrics/bank-metrics.ts'
import type { NatsIdentity } from './nats-identity/nats-identity.ts'
import { OperatorAudit } from './audit/operator-audit.ts'
import { DualControl } from './audit/dual-control.ts'
import { RateLimiter, databaseTokens, rate_limiter_defaults } from './limits/rate-limiter.ts'
import { LimitsService } from './limits/limits-service.ts'

export interface Services {
  credentials: CredentialStore
  /**
   * Every operator action in the audit trail (the endpoint wrapper runs audited operations through
   * it).
   */
  audit: OperatorAudit
  /** Deposits and reversals, and the second operator's approval above the threshold. */
  dualControl: DualControl
  entities: EntityService
  users: UserService
  accounts: AccountService
  partners: PartnerService
  calendar: SouthAfricanCalendar
  rail: Rail
  ledger: LedgerService
  /** The ledger's write engine (group commit, remembered accounts, idempotency keys). */
  ledgerWriter: LedgerWriter<Kysely<Database>>
  transfers: TransferService
  transactions: TransactionService
  clearing: ClearingService
  jobRunner: JobRunner
  jobs: JobsService
  events: EventDispatcher
  /** How the bank tells people things (payment advices); simulated until a real sender comes. */
  notifier: Notifier
  /** Bulk payments (`svc.account.<entity_id>.bulk_payment.*`) and their processing jobs. */
  bulk: BulkService
  bulkProcessing: BulkProcessing
  /**
   * Signed webhooks of partner events (`svc.webhook.<partner_id>.*`, the `webhook.deliver` jobs).
   */
  webhooks: WebhookService
  /** The operators' summary of the bank (`ops.summary`): indexed aggregates only. */
  summary: SummaryService
  /** The sandbox's clock and messages (`ops.sandbox.*`); refuses everything in production. */
  sandbox: SandboxService
  /** Mandates (`svc.debit.<entity_id>.mandate.*`) and their authentication jobs. */
  mandates: MandateService
  /** Debit orders (`svc.debit.<entity_id>.create|list|cancel|status`). */
  debit: DebitService
  /**
   * The debtors' banks: mandate authentication, collections, disputes (simulated until a real one
   * is given).
   */
  debitRail: DebitRail
  /**
   * Debit-order collection runs (`debit.collection_run` jobs, one per business day at 00:00 SAST).
   */
  debitCollection: DebitCollection
  /**
   * KYC submissions (`svc.user.<partner_id>.upload_kyc_documents`), operator review, documents and
   * the audit trail.
   */
  kyc: KycService
  /** KYB (`svc.kyb.<partner_id>.*`) and its operator review. */
  kyb: KybService
  /** The daily deletion of rejected applications' documents (`kyc.retention` jobs). */
  documentRetention: DocumentRetention
  /** The daily deletion of expired clientTxIds (`transfers.key_expiry`). */
  transferKeyExpiry: TransferKeyExpiry
  /** Prometheus metrics of this instance (served when BANK_METRICS_PORT is set). */
  metrics: BankMetrics
  /** Each credential's request budget, taken by the endpoint wrapper (limits/rate-limiter.ts). */
  limiter: RateLimiter
  /** Partners' request budgets for operators (`ops.partner.limits`). */
  limits: LimitsService
  /** Cards: issuing and controls. */
  cards: CardService
  /** The card network's authorizations, clearings, reversals and refunds. */
  cardNetwork: CardNetwork
  /** Partners' real-time card authorization decisions. */
  cardDecisions: PartnerDecisions
}

/**
 * What the composition root is given instead of building it from the settings: the sandbox's
 * clock and the lease clock, and the outside world's stand-ins (mandate authentication,
 * dropboxes, the company registry, the secrets box, the NATS authority, partners' card
 * decisions), which tests and the bank process hand over.
 */
export interface ServiceOverrides {
  /** The sandbox's movable clock (the same time as `clock`); absent in production. */
  sandboxClock?: MovableClock | undefined
  /** The clock job leases are measured on; the system clock unless a test controls it. */
  wallClock?: Clock | undefined
  /**
   * Who authenticates new mandates for the debtor's bank; accepts every mandate at once unless
   * given.
   */
  mandateAuthenticator?: MandateAuthenticator | undefined
  /**
   * The partners' document dropboxes (JetStream Object Store); refused as unavailable unless given.
   */
  dropbox?: Dropbox | undefined
  /** The company registry KYB asks for directors; the simulated one unless given. */
  registry?: CompanyRegistry | undefined
  /** The box that seals the bank's secrets (made from the settings unless given). */
  secretBox?: SecretBox | undefined
  /**
   * The bank as the NATS authority of its partners (`bank nats init`); absent on an open NATS
   * server.
   */
  natsIdentity?: NatsIdentity | undefined
  /** How the bank asks partners' card decisions over NATS; without it, each gets the stand-in. */
  cardDecisions?: DecisionTransport | undefined
}

/** Composition by hand: plain constructors, in dependency order. */
export function createServices(db: Kysely<Database>, clock: Clock, config: Config, log: Logger,
    rail?: Rail, given: ServiceOverrides = {}): Services {
  const metrics = new BankMetrics()
  metrics.readFrom(db)
  const credentials = new CredentialStore(db, clock, config.credentialCacheTtlMs)
  const users = new UserService(db, clock)
  const entities = new EntityService(db, clock, users)
  const accounts = new AccountService(
    db,
    clock,
    entities,
    { first: config.accountNumberFirst, last: config.accountNumberLast },
    config.defaultCountry,
  )
  // Webhook signing secrets are sealed with the bank's key; a partner's first one is made at
  // onboarding.
  const secretBox = given.secretBox
    ?? new SecretBox({ key: config.secretsKey, dataDir: config.dataDir })
  const webhookSecrets = new WebhookSecrets(db, clock, secretBox)
  const partners = new PartnerService(db, clock, credentials, entities, accounts, webhookSecrets,
    given.natsIdentity, log)
  const calendar = new SouthAfricanCalendar(config.declaredHolidays)
  const bankRail = rail ?? new SimulatedRail(db, clock)
  // The ledger's writer, the one door for money: group commit of payments and settlements,
  // and the composed writes of every capability (ledger-writer.ts).
  const ledgerWriter = new LedgerWriter<Kysely<Database>>(db, clock, {
    key_window_ms: config.transferKeyWindowMs,
    batch_jobs_max: config.ledgerBatchJobsMax,
    batches_in_flight_max: config.ledgerBatchesInFlightMax,
    batch_overlap_jobs_min: config.ledgerOverlapJobsMin,
    account_batches_max: config.ledgerAccountBatchesMax,
    queue_jobs_max: config.ledgerQueueJobsMax,
    observeBatch: (desk, size, seconds, ok) => metrics.ledgerBatch(desk, size, seconds, ok),
    // Card authorization batches have a counter of their own.
    observeStart: (start, desk) => {
      if (desk === card_authorization_desk) metrics.cardGroupStart(start)
      else metrics.ledgerBatchStart(start)
    },
  })
  const ledger = new LedgerService(db, ledgerWriter)
  const audit = new OperatorAudit(db, clock, log)
  const dualControl = new DualControl(db, clock, ledger, config.dualControlCents)
  // Background work of every capability runs on this one runner (src/jobs).
  const jobRunner = new JobRunner(db, clock, log, {
    poll_ms: config.jobsPollMs,
    concurrency_max: config.jobsConcurrencyMax,
    exclusive_wait_ms: config.jobsExclusiveWaitMs,
    ...(given.wallClock ? { wall_clock: given.wallClock } : {}),
  })
  const sandboxClock = given.sandboxClock
  if (sandboxClock) jobRunner.refreshClockWith(() => sandboxClock.refresh())
  const events = new EventDispatcher(db)
  jobRunner.dispatchEventsWith(events)
  const webhooks = new WebhookService(
    db,
    clock,
    jobRunner,
    events,
    webhookSecrets,
    new HttpWebhookSender({ timeout_ms: webhook_limits_default.attempt_timeout_ms }),
    { sandbox: config.sandbox, limits: { ...webhook_limits_default,
      partner_slots_max: config.webhookPartnerSlotsMax } },
  )
  // E-mail through SMTP when BANK_SMTP_URL is set; else the simulated notifier, which records
  // each message (the sandbox's `bank sandbox messages`) and sends nothing out.
  const simulatedNotifier = config.smtp ? undefined : new SimulatedNotifier(db, clock)
  const notifier: Notifier = config.smtp ? new SmtpNotifier(db, clock, config.smtp)
    : simulatedNotifier!
  const advices = new PaymentAdvices(db, clock, jobRunner, notifier, {
    payerName: async (partnerId, accountId) => (
      await entities.get(partnerId, (await accounts.get(partnerId, accountId)).entity_id)).name,
  })
  const payees = { accountIdByNumber: (n: string) => accounts.idByNumber(n) }
  const transfers = new TransferService(clock, calendar, bankRail, payees, advices, ledgerWriter,
    { fees: config.fees })
  const transactions = new TransactionService(db, accounts)
  const clearing = new ClearingService(
    db,
    clock,
    ledgerWriter,
    calendar,
    bankRail,
    jobRunner,
    advices,
    {
      cyclesSast: config.eftCyclesSast,
      chunkMax: config.clearingChunkMax,
      rtcRecoveryAfterMs: config.rtcRecoveryAfterMs,
      schedule: config.clearingSchedule,
    },
    log,
  )
  const jobs = new JobsService(db, clock)
  const bulk = new BulkService(db, clock, ledgerWriter, calendar, jobRunner, notifier, {
    entityEmail: async (partnerId, entityId) => (await entities.get(partnerId, entityId)).email,
    accountIdsOf: async (entityId) => (await accounts.list(entityId)).map((a) => a.id),
    // Without BANK_OTP_KEY, the PINs' key is derived from the bank's secrets key, which every
    // instance shares (BANK_SECRETS_KEY or the data directory's secrets-key).
  }, {
    fees: config.fees, otpKey: config.otpKey ?? secretBox.derivedKey('bulk-otp'),
      sandbox: config.sandbox,
    entityLimits: { ...entity_limits_default, wrong_pins_per_entity_max: config.bulkWrongPinsMax,
      pending_batches_per_entity_max: config.bulkPendingBatchesMax },
  })
  const bulkProcessing = new BulkProcessing(db, ledgerWriter, bankRail, jobRunner, advices, events)
  const sandbox = new SandboxService(sandboxClock, jobRunner, simulatedNotifier)
  const debitRail = new SimulatedDebitRail(db, clock)
  const mandates = new MandateService(db, clock, jobRunner, given.mandateAuthenticator
    ?? railAuthenticator(debitRail))
  const debit = new DebitService(db, clock, calendar, {
    accountIdsOf: async (entityId) => (await accounts.list(entityId)).map((a) => a.id),
  })
  const debitCollection = new DebitCollection(
    db,
    clock,
    ledgerWriter,
    calendar,
    debitRail,
    jobRunner,
    {
      feeCents: config.debitOrderFeeCents,
      batchMax: config.debitBatchMax,
      schedule: config.debitSchedule,
      sandbox: config.sandbox,
    },
    log,
  )
  const dropbox = given.dropbox ?? noDropbox
  const kyc = new KycService(db, clock, dropbox, users, partners)
  const kyb = new KybService(db, clock, dropbox, given.registry ?? new SimulatedCompanyRegistry(),
    entities, partners, notifier, users)
  const documentRetention = new DocumentRetention(db, clock, jobRunner,
    config.documentRetentionDays)
  const transferKeyExpiry = new TransferKeyExpiry(db, clock, jobRunner, config.transferKeyWindowMs)
  // Request budgets are wall-clock time, like job leases: the sandbox's moves do not refill them.
  const limiter = new RateLimiter(databaseTokens(db), given.wallClock ?? systemClock,
    { ...rate_limiter_defaults, defaults: config.rateLimits })
  const limits = new LimitsService(db, clock, limiter, config.rateLimits)
  const cards = new CardService(db, clock, secretBox, { bin: config.cardBin })
  const noDecisions: DecisionTransport = () => Promise.reject(new Error('no NATS connection'))
  const cardDecisions = new PartnerDecisions(db, clock, given.cardDecisions ?? noDecisions)
  const cardDeps = { ledger: ledgerWriter, decider: cardDecisions }
  const cardNetwork = new CardNetwork(db, clock, cards.pinKey, cards, cardDeps, jobRunner)
  const summary = new SummaryService(db, clock, calendar, { cyclesSast: config.eftCyclesSast })
  return {
    audit, dualControl, cards, cardNetwork, cardDecisions, summary,
    credentials, entities, users, accounts, partners, calendar, rail: bankRail, ledger,
      ledgerWriter, transfers, transactions, clearing,
    jobRunner, jobs, events, notifier, bulk, bulkProcessing, sandbox, webhooks, mandates, debit,
      debitRail, debitCollection,
    kyc, kyb, documentRetention, transferKeyExpiry, metrics, limiter, limits,
  }
}
