import { createHash, randomUUID } from 'node:crypto'
import { allOperations, scopeOf, subjectFor, type Operation } from '../../src/contract/index.ts'
import {
  onboardPartner,
  partnerRootEntities,
  rawRequest,
  type RawReply,
  type TestBank,
  type TestPartner,
} from '../support/harness.ts'
import { businessEntity, userRequest } from '../support/fixtures.ts'
import { uuidPattern } from '../support/assertions.ts'
import { appendEvent } from '../../src/events/index.ts'
import { addDays, toSast } from '../../src/calendar/sa-calendar.ts'
import { earliestCollectionDate } from '../../src/debit/debit-schedule.ts'
import { Objm } from '@nats-io/obj'
import { insertStatement } from '../../src/statements/statements-store.ts'

// One schema-valid request body for every operation of the endpoint table, so that the
// cross-cutting suites (auth matrix, malformed input) can be driven by `allOperations()`
// instead of by hand-kept lists. A new operation without a body here fails those suites.

export interface OperationFixture {
  tb: TestBank
  /** An approved partner with one business user and its pool account. */
  partner: TestPartner
  userId: string
  accountId: string
  /** A credential of `partner` that `ops_credential_revoke` may revoke. */
  revocableCredentialId: string
  /**
   * A NATS user of `partner` that `ops_partner_nats_revoke` may revoke (the suites run with the
   * NATS authority).
   */
  revocableNatsUserId: string
  /**
   * A partner of its own for `ops_partner_suspend`, `ops_partner_limits` and `ops_sandbox_reset`
   * (the suites send as `partner`, whose budget and data they leave alone).
   */
  suspendablePartnerId: string
  /** A transaction on `accountId`: the funding deposit. */
  transactionId: string
  /** The number of a second account of the partner's, for internal payments from `accountId`. */
  payeeAccountNumber: string
  /**
   * A third account of the partner's whose status the samples change (freeze, block, …), so
   * that no other sample finds `accountId` or the payee frozen.
   */
  statusAccountId: string
  /** A fourth account of the partner's, empty, that the close samples close. */
  closableAccountId: string
  /** A legal hold of one cent on `accountId`, for the release sample. */
  holdId: string
  /**
   * Unclaimed funds (payouts returned after their account closed), each paid once by the
   * sample; the payee is the partner's second account. None in production (a 404 then).
   */
  unclaimedTxIds: string[]
  /** An incoming payment (another bank's credit) to that second account: its tx_id. */
  incomingTxId: string
  /**
   * A message of the rail, for `ops_rails_message`: the incoming payment's pacs.008 in the
   * sandbox; production has none (its sample is then a 404, as for the incoming payment).
   */
  railMessageId: string
  /** A dead job of a kind no runner takes, for `ops_jobs_retry` (it stays queued once retried). */
  deadJobId: string
  /** A statement of `accountId` waiting to be made, for `account_statement_get`. */
  statementJobId: string
  /** Bulk batches of the partner's root entity: one to read, and pending ones each used once. */
  bulk: {
    statusId: string
    toVerify: Array<{ bulk_payment_id: string; otp: string }>
    toCancel: string[]
  }
  /**
   * An event of the partner's, handed over (so it has a webhook delivery), for `webhook_redeliver`.
   */
  webhookEventId: string
  /**
   * Debit orders of the root entity: an active monthly mandate, an order to read, and ones each
   * cancel uses once.
   */
  debit: {
    mandateReference: string
    statusOrderId: string
    ordersToCancel: string[]
    mandatesToCancel: string[]
    collectedOrderId: string
  }
  /**
   * KYC and KYB: a user and a business entity with documents in their dropboxes, and submissions
   * each decide uses once.
   */
  kyc: KycFixture
  /**
   * Deposits on `accountId` each reversal uses once, and dual-control requests (by another
   * operator) each decision uses once.
   */
  dualControl: { depositsToReverse: string[]; toApprove: string[]; toReject: string[] }
  /**
   * Monitoring: an open case of the partner's root entity (with an alert on the funding
   * deposit), open cases each decision uses once, and a filed report.
   */
  monitoring: { caseId: string; toDecide: string[]; reportId: string; assignee: string }
  /** Screening: a review to read, and reviews (of customers of their own) decisions use once. */
  screening: { reviewId: string; toDecide: string[] }
  /** Cards on `accountId`, and requests, cards and authorizations each one-way sample uses once. */
  cards: CardFixture
}

interface CardFixture {
  holderId: string
  approverId: string
  /** The request of the card the samples use (`cardOf` gives the card). */
  cardRequestId: string
  cardId: string
  /** A credential of the partner with the `card_details` permission (and the others). */
  detailsToken: string
  pendingAuthorizationId: string
  requestsToRespond: string[]
  cardsToActivate: Array<{ id: string; last_4: string }>
  authorizationsToClear: string[]
  authorizationsToReverse: string[]
  /** A card network's credential, for the `net.card.` subjects. */
  networkToken: string
  /** Authorizations each `net.card.` clear or reverse sample uses once (pools of their own). */
  networkAuthorizationsToClear: string[]
  networkAuthorizationsToReverse: string[]
}

/** Funds the pool account so that payments sent by the suites can succeed. */
async function fund(tb: TestBank, accountId: string): Promise<string> {
  const deposit = await tb.operator.accounts.deposit({ account_id: accountId, amount: 100_000_000 })
  return deposit.tx_id!
}

export async function prepareFixture(tb: TestBank): Promise<OperationFixture> {
  const partner = await onboardPartner(tb, { approve: true })
  const { userId } = await partner.client.users.create(userRequest(partner.rootEntityId))
  const { accounts } = await partner.client.accounts.getByEntity(
    { entity_id: partner.rootEntityId })
  const accountId = accounts[0]?.account_id
  if (!accountId) throw new Error('an approved root entity should have its pool account')
  const { revocable, revocableNatsUser } = await revocables(tb, partner)
  const suspendable = await onboardPartner(tb)
  const transactionId = await fund(tb, accountId)
  const deadJobId = await deadJob(tb)
  const webhookEventId = await webhookEvent(tb, partner.partnerId)
  const payee = await partner.client.accounts.create({ entity_id: partner.rootEntityId })
  const statusAccount = await partner.client.accounts.create({ entity_id: partner.rootEntityId })
  const closable = await partner.client.accounts.create({ entity_id: partner.rootEntityId })
  const hold = await tb.operator.accounts.placeHold({ account_id: accountId, amount: 1,
    reference: 'Sample hold' })
  // Another bank pays in through the sandbox's clearing house (production has none to ask).
  const incoming = tb.config.sandbox ? await tb.operator.sandbox.incoming({
    account_number: payee.account_number, amount: 1_000 }) : undefined
  const incomingTxId = incoming?.tx_id ?? randomUUID()
  const unclaimedTxIds = await unclaimedFixture(tb, partner)
  const bulk = await bulkBatches(tb, partner)
  const debit = await debitOrders(tb, partner)
  const kyc = await kycFixture(tb, partner)
  const dualControl = await dualControlFixture(tb, accountId)
  const cards = await cardFixture(tb, partner, accountId)
  return {
    monitoring: await monitoringFixture(tb, partner, accountId, transactionId),
    screening: await screeningFixture(tb, partner),
    cards,
    dualControl,
    tb, partner, userId,
    accountId,
    revocableCredentialId: revocable.id,
    revocableNatsUserId: revocableNatsUser.id,
    suspendablePartnerId: suspendable.partnerId,
    transactionId,
    payeeAccountNumber: payee.account_number,
    statusAccountId: statusAccount.account_id,
    closableAccountId: closable.account_id,
    holdId: hold.hold_id, unclaimedTxIds,
    incomingTxId,
    railMessageId: incoming?.message_id ?? 'PBNONE',
    deadJobId, statementJobId: await queuedStatement(tb, partner.partnerId, accountId),
    webhookEventId,
    bulk,
    debit,
    kyc,
  }
}

const monitoring_pool = 25

/**
 * Monitoring's rows for the samples, written as the sweep and a filing would: the fixture's
 * traffic trips no rule. The cases to decide are of customers of their own (ids only: a
 * decision reads no more of the customer).
 */
async function monitoringFixture(tb: TestBank, partner: TestPartner, accountId: string,
    txId: string): Promise<OperationFixture['monitoring']> {
  const db = tb.bank.database.db
  const now = tb.clock.now()
  const newCase = async (entityId: string, status: 'open' | 'reported') => {
    const id = randomUUID()
    await db.insertInto('monitoring_cases').values({ id, partner_id: partner.partnerId,
      entity_id: entityId, status, assigned_to: null, opened_at: now, updated_at: now,
      decision: null, decision_reason: null, decided_by: null, decided_at: null,
      approval_id: null }).execute()
    const alertId = randomUUID()
    await db.insertInto('monitoring_alerts').values({ id: alertId, case_id: id,
      partner_id: partner.partnerId, entity_id: entityId, account_id: accountId,
      rule: 'new_payee_large', params: JSON.stringify({ amount_cents: 1 }), detail: 'Sample',
      status: status === 'open' ? 'open' : 'closed', opened_at: now, last_tx_at: now,
      closed_at: status === 'open' ? null : now }).execute()
    await db.insertInto('monitoring_alert_transactions').values({ alert_id: alertId,
      tx_id: txId }).execute()
    return id
  }
  const caseId = await newCase(partner.rootEntityId, 'open')
  const toDecide: string[] = []
  for (let i = 0; i < monitoring_pool; i++) toDecide.push(await newCase(randomUUID(), 'open'))
  const reportId = randomUUID()
  await db.insertInto('monitoring_reports').values({ id: reportId,
    case_id: await newCase(partner.rootEntityId, 'reported'), partner_id: partner.partnerId,
    reference: `STR-SAMPLE-${reportId.slice(0, 8)}`, report_code: 'STR', reason: 'Sample',
    requested_by: 'sample', approved_by: 'sample', filed_at: now,
    xml: '<?xml version="1.0" encoding="UTF-8"?>\n<report/>\n' }).execute()
  const operator = await db.selectFrom('credentials').select('id').where('role', '=', 'operator')
    .where('revoked_at', 'is', null).orderBy('created_seq').executeTakeFirstOrThrow()
  return { caseId, toDecide, reportId, assignee: operator.id }
}

/**
 * Screening reviews for the samples, written as a hit would write them (the fixture loads no
 * list): of customers of their own (ids only: a decision freezes their accounts, none).
 */
async function screeningFixture(tb: TestBank,
    partner: TestPartner): Promise<OperationFixture['screening']> {
  const db = tb.bank.database.db
  const review = async () => {
    const id = randomUUID()
    const entityId = randomUUID()
    await db.insertInto('screening_reviews').values({ id, partner_id: partner.partnerId,
      entity_id: entityId, subject: 'entity', subject_id: entityId, cause: 'create',
      screened: JSON.stringify([{ name: 'Sample Person', kind: 'individual' }]),
      hits: JSON.stringify([]), top_score: 0.9, status: 'open', opened_at: tb.clock.now(),
      clear_requested_by: null, clear_requested_by_name: null, decided_by: null,
      decided_by_name: null, decided_at: null, reason: null }).execute()
    return id
  }
  const reviewId = await review()
  const toDecide: string[] = []
  for (let i = 0; i < monitoring_pool; i++) toDecide.push(await review())
  return { reviewId, toDecide }
}

const unclaimed_pool = 25

/**
 * Unclaimed funds for the pay sample: payouts of an account of the partner's to the simulated
 * rail's "returned" recipient, the account closed (its balance paid to `accountId`), and a
 * clearing run that brings the returns back, each then kept as unclaimed funds.
 */
async function unclaimedFixture(tb: TestBank, partner: TestPartner): Promise<string[]> {
  // Only the sandbox's clearing house returns payouts. Made before anything else waits for a
  // clearing run: this one makes a clearing run of its own.
  if (!tb.config.sandbox) return []
  const { account_id: closing } = await partner.client.accounts.create(
    { entity_id: partner.rootEntityId })
  await tb.operator.accounts.deposit({ account_id: closing, amount: 1_000_000 })
  const txIds: string[] = []
  for (let i = 0; i < unclaimed_pool; i++) {
    const sent = await partner.client.accounts.transfer({ account_id: closing,
      clientTxId: randomUUID(), amount: 100, ref: 'to return', own_ref: 'unclaimed sample',
      account_number: '4000000028', branch_code: '250655', name: 'Returned', pay_and_clear: true })
    txIds.push(sent.tx_id)
  }
  const { accounts } = await partner.client.accounts.getByEntity(
    { entity_id: partner.rootEntityId })
  await partner.client.accounts.close({ account_id: closing, reason: 'unclaimed sample',
    pay_to_account_id: accounts[0]!.account_id })
  await tb.operator.clearing.run({})
  return txIds
}

/** A credential and a NATS user of the partner's that the revoke samples may revoke. */
async function revocables(tb: TestBank, partner: TestPartner) {
  const revocable = await tb.operator.credentials.create({
    partner_id: partner.partnerId,
    permissions: ['read'],
    label: 'to revoke',
  })
  // Only a bank that is the NATS authority issues NATS users (the suites that send every operation
  // run with one).
  const revocableNatsUser = tb.authority
    ? await tb.operator.partners.natsCreds({ partner_id: partner.partnerId, label: 'to revoke' })
    : { id: '' }
  return { revocable, revocableNatsUser }
}

/** A statement of the account, queued (as a large range is before its job runs). */
async function queuedStatement(tb: TestBank, partnerId: string, accountId: string) {
  const id = randomUUID()
  await insertStatement(tb.bank.database.db, { id, partner_id: partnerId, account_id: accountId,
    format: 'camt053', from_date: '2026-01-01', to_date: '2026-01-31', origin: 'request',
    file_name: 'statement.xml', content_type: 'application/xml', created_at: tb.clock.now() })
  return id
}

/** Requests, physical cards and authorizations each one-way card sample uses once. */
const card_pool = 25

async function cardFixture(
  tb: TestBank,
  partner: TestPartner,
  accountId: string,
): Promise<CardFixture> {
  const address = { address_line_1: '1 Long Street', city: 'Cape Town', country: 'ZAF' }
  const user = async (email: string) => {
    const body = userRequest(partner.rootEntityId, { email, verified: true, address })
    return (await partner.client.users.create(body as never)).userId
  }
  const holderId = await user('holder@example.com')
  const approverId = await user('approver@example.com')
  const cards = new SampleCards(tb, partner, accountId, holderId, approverId)
  const cardRequest = await cards.issue(0)
  const authorize = () => cards.authorize(cardRequest)
  const everything = ['read', 'write', 'payments', 'card_details'] as const
  const details = await tb.operator.credentials.create({
    partner_id: partner.partnerId,
    permissions: [...everything],
    label: 'card details',
  })
  const network = await tb.operator.credentials.createCardNetwork({ label: 'sample network' })
  const fixture: CardFixture = {
    networkToken: network.token,
    networkAuthorizationsToClear: [],
    networkAuthorizationsToReverse: [],
    holderId,
    approverId,
    cardRequestId: cardRequest,
    cardId: (await cards.cardOf(cardRequest)).id,
    detailsToken: details.token,
    pendingAuthorizationId: await authorize(),
    requestsToRespond: [],
    cardsToActivate: [],
    authorizationsToClear: [],
    authorizationsToReverse: [],
  }
  for (let i = 0; i < card_pool; i++) {
    fixture.requestsToRespond.push(await cards.request(0))
    fixture.cardsToActivate.push(await cards.cardOf(await cards.issue(1)))
    fixture.authorizationsToClear.push(await authorize())
    fixture.authorizationsToReverse.push(await authorize())
    fixture.networkAuthorizationsToClear.push(await authorize())
    fixture.networkAuthorizationsToReverse.push(await authorize())
  }
  return fixture
}

/** Card requests, approvals and authorizations for the samples. */
class SampleCards {
  constructor(
    private readonly tb: TestBank,
    private readonly partner: TestPartner,
    private readonly accountId: string,
    private readonly holderId: string,
    private readonly approverId: string,
  ) {}

  async request(type: number): Promise<string> {
    const body = { account_id: this.accountId, user_id: this.holderId, name: 'Sample', use_type: 0 }
    return (await this.partner.client.cards.request({ ...body, type })).id
  }

  /** Requests and approves a card; answers its request's id. */
  async issue(type: number): Promise<string> {
    const request_id = await this.request(type)
    await this.partner.client.cards.respondToRequest({
      entity_id: this.partner.rootEntityId,
      account_id: this.accountId,
      initiator: this.approverId,
      request_id,
      approved: true,
    })
    return request_id
  }

  async cardOf(requestId: string): Promise<{ id: string; last_4: string }> {
    return this.tb.bank.database.db
      .selectFrom('cards')
      .select(['id', 'last_4'])
      .where('request_id', '=', requestId)
      .executeTakeFirstOrThrow()
  }

  async authorize(requestId: string): Promise<string> {
    const { id } = await this.cardOf(requestId)
    const body = { merchant_name: 'Fixture', mcc: '5812', merchant_country: 'ZAF' }
    const where = { channel: 'pos', entry_mode: 'chip' } as const
    // Through the service, not ops.sandbox.card: a production bank has fixtures too.
    const request = { card_id: id, amount: 100, ...body, ...where }
    const auth = await this.tb.bank.services.cardNetwork.authorize(request, 'fixture')
    return auth.authorization_id
  }
}

/** Deposits and dual-control requests each reverse, approve and reject sample uses once. */
const dual_control_pool = 25

async function dualControlFixture(
  tb: TestBank,
  accountId: string,
): Promise<OperationFixture['dualControl']> {
  const depositsToReverse: string[] = []
  for (let i = 0; i < dual_control_pool; i++) {
    depositsToReverse.push(
      (
        await tb.operator.accounts.deposit({
          account_id: accountId,
          amount: 100,
          ref: 'to reverse',
        })
      ).tx_id!,
    )
  }
  // Requests of another operator (the test bank's threshold is off, so they are written here).
  const request = async () => {
    const id = randomUUID()
    const now = tb.clock.now()
    await tb.bank.database.db
      .insertInto('approvals')
      .values({
        id,
        kind: 'deposit',
        account_id: accountId,
        amount: 100n,
        request: JSON.stringify({ ref: 'approved' }),
        state: 'pending_approval',
        requested_by: randomUUID(),
        requested_by_name: 'another operator',
        requested_at: now,
        expires_at: new Date(now.getTime() + 86_400_000),
        decided_by: null,
        decided_by_name: null,
        decided_at: null,
        reason: null,
        tx_id: null,
      })
      .execute()
    return id
  }
  const toApprove: string[] = []
  const toReject: string[] = []
  for (let i = 0; i < dual_control_pool; i++) {
    toApprove.push(await request())
    toReject.push(await request())
  }
  return { depositsToReverse, toApprove, toReject }
}

/** Mandates and orders each cancel sample uses once (a cancelled one cannot be cancelled again). */
const debit_cancel_pool = 25

/** A mandate of the root entity, made active by its authentication run here and now. */
async function debitMandate(tb: TestBank, partner: TestPartner): Promise<string> {
  const mandate_reference = `FIX-${randomUUID().slice(0, 8)}`
  await partner.client.mandates.create({
    entity_id: partner.rootEntityId,
    ...debitMandateBody(mandate_reference),
  })
  const row = await tb.bank.database.db
    .selectFrom('debit_mandates')
    .select('id')
    .where('entity_id', '=', partner.rootEntityId)
    .where('mandate_reference', '=', mandate_reference)
    .executeTakeFirstOrThrow()
  await tb.bank.services.mandates.authenticate(row.id, 1)
  return mandate_reference
}

async function debitOrders(tb: TestBank, partner: TestPartner): Promise<OperationFixture['debit']> {
  const mandateReference = await debitMandate(tb, partner)
  const order = async () =>
    (
      await partner.client.debitOrders.create({
        entity_id: partner.rootEntityId,
        ...debitOrderBody(tb, mandateReference),
      })
    ).debit_order_id
  const statusOrderId = await order()
  const ordersToCancel: string[] = []
  const mandatesToCancel: string[] = []
  for (let i = 0; i < debit_cancel_pool; i++) {
    ordersToCancel.push(await order())
    mandatesToCancel.push(await debitMandate(tb, partner))
  }
  // One order collected already (a run of its date, before the others' dates), for
  // ops_debit_dispute.
  const earliest = earliestCollectionDate(tb.clock.now(), tb.bank.services.calendar)
  const collected = await partner.client.debitOrders.create({
    entity_id: partner.rootEntityId,
    ...debitOrderBody(tb, mandateReference),
    collection_date: earliest,
  })
  await tb.bank.services.debitCollection.run('fixture', earliest)
  return {
    mandateReference,
    statusOrderId,
    ordersToCancel,
    mandatesToCancel,
    collectedOrderId: collected.debit_order_id,
  }
}

const debtorAccount = {
  account_holder_name: 'Thandi Nkosi',
  account_number: '1234567890',
  account_type: 'cheque' as const,
  branch_code: '250655',
}

function debitMandateBody(mandate_reference: string) {
  return { mandate_reference, ...debtorAccount, max_amount: 100_000, frequency: 'monthly' as const }
}

/**
 * A monthly order two weeks ahead of the bank's day (well past the lead time and the cancel
 * deadline).
 */
function debitOrderBody(tb: TestBank, mandate_reference: string) {
  const collection_date = addDays(toSast(tb.clock.now()).date, 14)
  return {
    clientTxId: randomUUID(),
    mandate_reference,
    amount: 1_500,
    collection_date,
    ...debtorAccount,
    reference: 'Gym',
    frequency: 'monthly' as const,
    end_date: addDays(collection_date, 180),
  }
}

export interface KycFixture {
  /**
   * A business entity's user whose dropbox holds `kycNames` (its KYC may be submitted again and
   * again while pending).
   */
  userId: string
  kycNames: { id_document: string; proof_of_residence: string }
  /**
   * A business entity (one director on record) whose dropbox holds `kybDocument` and the director's
   * `directorDocument`.
   */
  entityId: string
  directorId: string
  kybDocument: string
  directorDocument: string
  /** A document of the user's submission, for ops_document_get. */
  documentId: string
  /** Users and entities with a submission pending, each decided once. */
  usersToDecide: string[]
  entitiesToDecide: string[]
}

/** Submissions each decide sample uses once. */
const kyc_decide_pool = 10
const pdfBytes = new TextEncoder().encode('%PDF-1.7\nsample\n%%EOF\n')

async function kycFixture(tb: TestBank, partner: TestPartner): Promise<KycFixture> {
  // The partner's own connection: with the NATS authority its dropboxes are in its account.
  const objm = new Objm(partner.nc)
  const submittedUser = async () => {
    const { id: entityId } = await partner.client.entities.create(businessEntity())
    const { userId } = await partner.client.users.create(userRequest(entityId, { verified: false }))
    const store = await objm.create(`kyc_dropbox_${userId}`)
    const names = {
      id_document: `kyc_id_front_${userId}_1700000000`,
      proof_of_residence: `kyc_proof_of_residence_${userId}_1700000000`,
    }
    for (const name of Object.values(names)) await store.putBlob({ name }, pdfBytes)
    await partner.client.users.uploadKycDocuments({ user_id: userId, ...names })
    return { userId, names }
  }
  const submittedEntity = async () => {
    const { id: entityId } = await partner.client.entities.create(businessEntity())
    const kyb = await partner.client.kyb.get({ entity_id: entityId })
    const directorId = kyb.directors[0]!.id
    const store = await objm.create(`kyb_dropbox_${entityId}`)
    const kybDocument = 'business_registration_1700000000'
    const directorDocument = `director_id_front_${directorId}_1700000000`
    await store.putBlob({ name: kybDocument }, pdfBytes)
    await store.putBlob({ name: directorDocument }, pdfBytes)
    await partner.client.kyb.submit({
      entity_id: entityId,
      documents: [kybDocument],
      directors: { [directorId]: [directorDocument] },
    })
    return { entityId, directorId, kybDocument, directorDocument }
  }
  const user = await submittedUser()
  const entity = await submittedEntity()
  const shown = await tb.operator.kyc.show({ user_id: user.userId })
  const usersToDecide: string[] = []
  const entitiesToDecide: string[] = []
  for (let i = 0; i < kyc_decide_pool; i++) {
    usersToDecide.push((await submittedUser()).userId)
    entitiesToDecide.push((await submittedEntity()).entityId)
  }
  return {
    userId: user.userId,
    kycNames: user.names,
    ...entity,
    documentId: shown.documents[0]!.document_id,
    usersToDecide,
    entitiesToDecide,
  }
}

/**
 * The bank settings a suite on this fixture starts with: its pools keep 51 batches of the
 * root entity waiting, and the suites send many wrong PINs, far over the per-entity limits
 * (test/bulk covers those at their real values); and its funding deposit must move at once,
 * also in production mode, where dual control would hold it (test/audit covers that).
 */
export const fixtureBankEnv = {
  BANK_BULK_PENDING_BATCHES_MAX: '100000',
  BANK_BULK_WRONG_PINS_MAX: '100000',
  BANK_DUAL_CONTROL_CENTS: '0',
}

/**
 * Pending batches each verify or cancel sample uses once (a batch is verified or cancelled once).
 */
const bulk_pending_batches = 25

async function bulkBatches(tb: TestBank, partner: TestPartner): Promise<OperationFixture['bulk']> {
  const initiate = async () => {
    const bulk_payment_id = `fixture-${randomUUID()}`
    await partner.client.bulkPayments.initiate({
      entity_id: partner.rootEntityId,
      ...bulkBody(bulk_payment_id),
    })
    return bulk_payment_id
  }
  const statusId = await initiate()
  const toVerify: Array<{ bulk_payment_id: string; otp: string }> = []
  const toCancel: string[] = []
  for (let i = 0; i < bulk_pending_batches; i++) {
    const bulk_payment_id = await initiate()
    toVerify.push({ bulk_payment_id, otp: await bulkOtp(tb, partner.partnerId, bulk_payment_id) })
    toCancel.push(await initiate())
  }
  return { statusId, toVerify, toCancel }
}

/** A batch's PIN as its entity's user reads it: from the message the notifier recorded. */
async function bulkOtp(tb: TestBank, partnerId: string, bulkPaymentId: string): Promise<string> {
  const db = tb.bank.database.db
  const batch = await db
    .selectFrom('bulk_payments')
    .select('id')
    .where('partner_id', '=', partnerId)
    .where('bulk_payment_id', '=', bulkPaymentId)
    .executeTakeFirstOrThrow()
  const message = await db
    .selectFrom('notifier_messages')
    .select('body')
    .where('key', '=', `bulk_otp:${batch.id}:1`)
    .executeTakeFirstOrThrow()
  return /one-time PIN is (\d{6})/.exec(message.body)?.[1] ?? ''
}

function bulkBody(bulk_payment_id: string) {
  return {
    bulk_payment_id,
    total_amount: 100,
    payment_count: 1,
    description: 'supplier run',
    payments: [
      {
        payment_id: 'p1',
        amount: 100,
        ref: 'invoice 3',
        own_ref: 'supplier run',
        account_number: '62000000001',
        branch_code: '250655',
        name: 'Bongani Supplies',
        real_time: true,
      },
    ],
  }
}

/**
 * The next unused pending batch (the last one again when the suite used them all: it then fails,
 * visibly).
 */
function takeOne<T>(pool: T[]): T {
  return (pool.length > 1 ? pool.shift() : pool[0]) as T
}

async function webhookEvent(tb: TestBank, partnerId: string): Promise<string> {
  const id = await tb.bank.database.db.transaction().execute((trx) =>
    appendEvent(trx, {
      type: 'bulk_payment.cancelled',
      partner_id: partnerId,
      resource_id: randomUUID(),
      data: {},
      occurred_at: tb.clock.now(),
    }),
  )
  while ((await tb.bank.services.events.dispatchPending()) > 0) {
    // Until this event (and any before it) is handed over.
  }
  return id
}

async function deadJob(tb: TestBank): Promise<string> {
  const now = tb.clock.now()
  const id = randomUUID()
  await tb.bank.database.db
    .insertInto('jobs')
    .values({
      id,
      kind: 'test.never_run',
      key: id,
      payload: '{}',
      state: 'dead',
      due_at: now,
      attempts: 3,
      attempts_max: 3,
      lease_ms: 60_000,
      last_error: 'for the suites',
      created_at: now,
      updated_at: now,
    })
    .execute()
  return id
}

type BodyFactory = (f: OperationFixture) => Record<string, unknown>

const bodies: Record<string, BodyFactory> = {
  entity_create: () => businessEntity(),
  entity_info: (f) => ({ entity_id: f.partner.rootEntityId }),
  entity_list: () => ({}),
  entity_get_address: (f) => ({ entity_id: f.partner.rootEntityId }),
  entity_update_address: (f) => ({
    entity_id: f.partner.rootEntityId,
    address_line_1: '1 Main Road',
    city: 'Cape Town',
    country: 'ZAF',
  }),
  user_create: (f) => userRequest(f.partner.rootEntityId),
  user_update: (f) => ({ user_id: f.userId, first_name: 'Lindiwe' }),
  user_get: (f) => ({ user_id: f.userId }),
  user_get_birth_details: (f) => ({ user_id: f.userId }),
  user_list: () => ({}),
  account_create: (f) => ({ entity_id: f.partner.rootEntityId }),
  account_get_by_entity: (f) => ({ entity_id: f.partner.rootEntityId }),
  account_get_details: (f) => ({ account_id: f.accountId }),
  account_status: (f) => ({ account_id: f.accountId }),
  account_freeze: (f) => ({ account_id: f.statusAccountId, reason: 'Sample freeze' }),
  account_unfreeze: (f) => ({ account_id: f.statusAccountId, reason: 'Sample unfreeze' }),
  account_close: (f) => ({ account_id: f.closableAccountId, reason: 'Sample close' }),
  ops_partner_create: () => {
    const e = businessEntity()
    return {
      name: e.name,
      email: e.email,
      registration_number: e.registration_number,
      trading_name: e.trading_name,
    }
  },
  ops_partner_list: () => ({}),
  ops_credential_create: (f) => ({ partner_id: f.partner.partnerId, permissions: ['read'] }),
  ops_credential_revoke: (f) => ({ credential_id: f.revocableCredentialId }),
  ops_credential_list: (f) => ({ partner_id: f.partner.partnerId }),
  ops_credential_create_card_network: () => ({ label: 'Sample network' }),
  ops_credential_list_card_networks: () => ({}),
  ops_partner_nats_creds: (f) => ({ partner_id: f.partner.partnerId, label: 'sample' }),
  ops_partner_nats_users: (f) => ({ partner_id: f.partner.partnerId }),
  ops_partner_nats_revoke: (f) => ({
    partner_id: f.partner.partnerId,
    user_id: f.revocableNatsUserId,
  }),
  // A partner of its own (suspended by the first call; later ones change nothing), and letting
  // back `partner`, which is not suspended (accepted, changes nothing).
  ops_partner_suspend: (f) => ({ partner_id: f.suspendablePartnerId }),
  ops_partner_unsuspend: (f) => ({ partner_id: f.partner.partnerId }),
  ops_partner_limits: (f) => ({
    partner_id: f.suspendablePartnerId,
    requests_per_second: 1000,
    burst: 2000,
  }),
  ops_entity_review: (f) => ({ entity_id: f.partner.rootEntityId, decision: 'approve' }),
  ops_entity_list: (f) => ({ partner_id: f.partner.partnerId }),
  ops_user_kyc: (f) => ({ user_id: f.userId, status: 'pending' }),
  ops_account_list: (f) => ({ entity_id: f.partner.rootEntityId }),
  // Payments and ledger operations (docs/guides/payments.md).
  account_transfer_eft_rtc: (f) => ({
    account_id: f.accountId,
    clientTxId: randomUUID(),
    amount: 100,
    ref: 'invoice 1',
    own_ref: 'supplier run',
    account_number: '62000000001',
    branch_code: '250655',
    name: 'Bongani Supplies',
  }),
  account_transfer_internal: (f) => ({
    account_id: f.accountId,
    clientTxId: randomUUID(),
    amount: 100,
    ref: 'invoice 2',
    own_ref: 'own account',
    account_number: f.payeeAccountNumber,
    name: 'Second Account',
  }),
  account_list_transactions: (f) => ({ account_id: f.accountId, limit: 5 }),
  account_get_transaction: (f) => ({ tx_id: f.transactionId }),
  ops_account_deposit: (f) => ({ account_id: f.accountId, amount: 100 }),
  ops_transaction_reverse: (f) => ({
    tx_id: takeOne(f.dualControl.depositsToReverse),
    reason: 'credited in error',
  }),
  ops_approvals_list: () => ({ state: 'pending_approval', limit: 10 }),
  ops_approvals_approve: (f) => ({ approval_id: takeOne(f.dualControl.toApprove) }),
  ops_approvals_reject: (f) => ({
    approval_id: takeOne(f.dualControl.toReject),
    reason: 'not expected',
  }),
  ops_ledger_verify: () => ({}),
  ops_clearing_run: () => ({}),
  ops_jobs_list: () => ({ state: 'dead', limit: 10 }),
  ops_jobs_get: (f) => ({ job_id: f.deadJobId }),
  ops_jobs_retry: (f) => ({ job_id: f.deadJobId }),
  // Bulk payments, on the root entity's subject.
  bulk_payment_initiate: () => bulkBody(`sample-${randomUUID()}`),
  bulk_payment_verify: (f) => takeOne(f.bulk.toVerify),
  bulk_payment_status: (f) => ({ bulk_payment_id: f.bulk.statusId }),
  // Without the optional reason: a suite that sends the body once without each optional
  // field would otherwise cancel the batch and then find it cancelled (a 400, rightly).
  bulk_payment_cancel: (f) => ({ bulk_payment_id: takeOne(f.bulk.toCancel) }),
  ops_sandbox_otp: (f) => ({ bulk_payment_id: f.bulk.statusId, partner_id: f.partner.partnerId }),
  // Incoming payments (another bank's credit, through the sandbox's clearing house).
  account_incoming_details: (f) => ({ tx_id: f.incomingTxId }),
  ops_sandbox_incoming: (f) => ({ account_number: f.payeeAccountNumber, amount: 100 }),
  // Statements: today's of the funded account (in the reply), and one queued to read.
  account_statement: (f) => ({ account_id: f.accountId, from: toSast(f.tb.clock.now()).date,
    to: toSast(f.tb.clock.now()).date, format: 'camt053' }),
  account_statement_get: (f) => ({ job_id: f.statementJobId }),
  // What operators see of the rail.
  ops_rails_messages: () => ({ direction: 'in', kind: 'pacs.008', limit: 10 }),
  ops_rails_message: (f) => ({ message_id: f.railMessageId, direction: 'in', limit: 10 }),
  ops_rails_refusals: () => ({ limit: 10 }),
  ops_rails_statements: () => ({ limit: 10, before: '2026-12-01' }),
  ops_rails_reconcile: () => ({ date: '2026-11-23' }),
  ops_rails_unanswered: (f) => ({ partner_id: f.partner.partnerId, payment_type: 'EFT',
    older_than_minutes: 0, limit: 10 }),
  // Sanctions screening: a one-part upload of a one-entry UN list (each a new version).
  ops_screening_upload: () => {
    const list = Buffer.from('<CONSOLIDATED_LIST dateGenerated="2026-11-30T00:00:00Z">' +
      '<INDIVIDUALS><INDIVIDUAL><FIRST_NAME>SAMPLE</FIRST_NAME><SECOND_NAME>PERSON' +
      '</SECOND_NAME><REFERENCE_NUMBER>SMi.001</REFERENCE_NUMBER></INDIVIDUAL></INDIVIDUALS>' +
      '<ENTITIES/></CONSOLIDATED_LIST>')
    return { upload_id: randomUUID(), part: 0, parts: 1,
      sha256: createHash('sha256').update(list).digest('hex'), data: list.toString('base64') }
  },
  ops_screening_lists: () => ({ limit: 10 }),
  ops_screening_check: () => ({ name: 'Sample Person', kind: 'individual',
    date_of_birth: '1970-01-01', id_number: 'A123456', threshold: 0.8 }),
  ops_screening_reviews: (f) => ({ status: 'open', partner_id: f.partner.partnerId, limit: 10 }),
  ops_screening_review: (f) => ({ review_id: f.screening.reviewId }),
  ops_screening_review_decide: (f) => ({ review_id: takeOne(f.screening.toDecide),
    decision: 'confirm', reason: 'Sample decision' }),
  // Webhooks.
  // `.invalid` never resolves: the endpoint passes the policy in either mode, and nothing is sent
  // anywhere.
  webhook_set_endpoint: () => ({ url: 'https://hooks.invalid/bank' }),
  webhook_get_endpoint: () => ({}),
  webhook_rotate_secret: () => ({}),
  webhook_list_deliveries: () => ({ event_type: 'payment.success', limit: 10 }),
  webhook_redeliver: (f) => ({ event_id: f.webhookEventId }),
  ops_webhook_deliveries: (f) => ({ partner_id: f.partner.partnerId, state: 'failed', limit: 10 }),
  ops_webhook_redeliver: (f) => ({ event_id: f.webhookEventId }),
  ops_webhook_endpoints: (f) => ({ partner_id: f.partner.partnerId, state: 'paused', limit: 10 }),
  ops_webhook_resume_endpoint: (f) => ({ partner_id: f.partner.partnerId }),
  ops_summary: () => ({}),
  ops_payment_pending: (f) => ({ partner_id: f.partner.partnerId, rail: 'EFT', limit: 10 }),
  ops_console_sign_in: () => ({ session_id: randomUUID(), address: '127.0.0.1' }),
  ops_console_sign_out: () => ({ session_id: randomUUID(), reason: 'signed_out' }),
  ops_sandbox_clock: () => ({}),
  // To the bank's own time: the suites call it again and again, and a clock creeping on
  // would bring other work due in the middle of their checks.
  ops_sandbox_clock_advance: (f) => ({ to: f.tb.clock.now().toISOString() }),
  ops_sandbox_messages: () => ({ limit: 5 }),
  // A partner's own sandbox clock; an advance to where it stands (its clock is the bank's).
  sandbox_partner_clock: () => ({}),
  sandbox_partner_clock_advance: (f) => ({ to: f.tb.clock.now().toISOString() }),
  // A partner's reset without `confirm` is its preview (nothing changes: the suites send as
  // the fixture's partner); the operators' resets the partner made for suspending.
  sandbox_partner_reset: () => ({}),
  ops_sandbox_reset: (f) => ({ partner_id: f.suspendablePartnerId }),
  // Debit orders and mandates, on the root entity's subject.
  debit_mandate_create: () => debitMandateBody(`SAMPLE-${randomUUID().slice(0, 8)}`),
  debit_mandate_get: (f) => ({ mandate_reference: f.debit.mandateReference }),
  debit_mandate_list: () => ({ status: 'active' }),
  debit_mandate_cancel: (f) => ({ mandate_reference: takeOne(f.debit.mandatesToCancel) }),
  debit_create: (f) => debitOrderBody(f.tb, f.debit.mandateReference),
  debit_list: () => ({ status: 'scheduled' }),
  debit_cancel: (f) => ({ debit_order_id: takeOne(f.debit.ordersToCancel) }),
  debit_status: (f) => ({ debit_order_id: f.debit.statusOrderId }),
  ops_debit_list: (f) => ({ partner_id: f.partner.partnerId, limit: 10 }),
  ops_debit_run: () => ({}),
  ops_debit_dispute: (f) => ({ debit_order_id: f.debit.collectedOrderId }),
  // KYC and KYB: the fixture's user and entity have documents in their dropboxes.
  user_upload_kyc_documents: (f) => ({ user_id: f.kyc.userId, ...f.kyc.kycNames }),
  kyb_get: (f) => ({ entity_id: f.kyc.entityId }),
  kyb_submit: (f) => ({
    entity_id: f.kyc.entityId,
    documents: [f.kyc.kybDocument],
    directors: { [f.kyc.directorId]: [f.kyc.directorDocument] },
  }),
  kyb_update: (f) => ({
    entity_id: f.kyc.entityId,
    metadata: { industry: 'retail', employees: 12 },
  }),
  kyb_update_director: (f) => ({
    entity_id: f.kyc.entityId,
    director_id: f.kyc.directorId,
    full_name: 'Thandi Nkosi',
    email: 'thandi@example.com',
  }),
  kyb_send_verification_email: (f) => ({
    entity_id: f.kyc.entityId,
    director_id: f.kyc.directorId,
    email: 'thandi@example.com',
  }),
  ops_kyc_list: (f) => ({ partner_id: f.partner.partnerId }),
  ops_kyc_show: (f) => ({ user_id: f.kyc.userId }),
  ops_kyc_decide: (f) => ({ user_id: takeOne(f.kyc.usersToDecide), decision: 'approve' }),
  ops_kyb_list: (f) => ({ partner_id: f.partner.partnerId }),
  ops_kyb_show: (f) => ({ entity_id: f.kyc.entityId }),
  ops_kyb_decide: (f) => ({
    entity_id: takeOne(f.kyc.entitiesToDecide),
    decision: 'reject',
    reason: 'documents unreadable',
  }),
  ops_document_get: (f) => ({ document_id: f.kyc.documentId, length: 1024 }),
  ops_audit_list: (f) => ({ subject_id: f.kyc.userId, limit: 10 }),
  ops_account_show: (f) => ({ account_id: f.accountId }),
  ops_account_statement: (f) => ({ account_id: f.accountId, from: toSast(f.tb.clock.now()).date,
    to: toSast(f.tb.clock.now()).date, format: 'pdf' }),
  ops_account_status: (f) => ({ account_id: f.accountId }),
  ops_account_freeze: (f) => ({ account_id: f.statusAccountId, reason: 'Sample freeze' }),
  ops_account_unfreeze: (f) => ({ account_id: f.statusAccountId, reason: 'Sample unfreeze' }),
  ops_account_block: (f) => ({ account_id: f.statusAccountId, reason: 'Sample block' }),
  ops_account_reactivate: (f) => ({ account_id: f.statusAccountId, reason: 'Sample reactivate' }),
  ops_account_close: (f) => ({ account_id: f.closableAccountId, reason: 'Sample close' }),
  ops_account_hold_place: (f) => ({ account_id: f.accountId, amount: 1, reference: 'Sample' }),
  ops_account_hold_release: (f) => ({ hold_id: f.holdId, reason: 'Sample release' }),
  ops_account_holds: (f) => ({ account_id: f.accountId }),
  ops_account_unclaimed: (f) => ({ account_id: f.closableAccountId }),
  ops_account_unclaimed_pay: (f) => ({
    tx_id: takeOne(f.unclaimedTxIds.length > 0 ? f.unclaimedTxIds : [f.transactionId]),
    pay_to_account_id: f.accountId, reason: 'Sample payment of unclaimed funds' }),
  ops_account_transactions: (f) => ({ account_id: f.accountId, limit: 10 }),
  ops_monitoring_rules: () => ({}),
  ops_monitoring_rule_set: () => ({ rule: 'structuring', enabled: true }),
  ops_monitoring_run: () => ({}),
  ops_monitoring_alerts: () => ({ status: 'open', limit: 10 }),
  ops_monitoring_cases: () => ({ status: 'open', limit: 10 }),
  ops_monitoring_case: (f) => ({ case_id: f.monitoring.caseId }),
  ops_monitoring_case_assign: (f) => ({ case_id: f.monitoring.caseId,
    assignee: f.monitoring.assignee }),
  ops_monitoring_case_note: (f) => ({ case_id: f.monitoring.caseId, text: 'Sample note' }),
  ops_monitoring_case_decide: (f) => ({ case_id: takeOne(f.monitoring.toDecide),
    decision: 'escalate', reason: 'Sample decision' }),
  ops_monitoring_reports: () => ({ limit: 10 }),
  ops_monitoring_report: (f) => ({ report_id: f.monitoring.reportId }),
  card_request: (f) => ({
    account_id: f.accountId,
    user_id: f.cards.holderId,
    name: 'Sample',
    type: 0,
    use_type: 0,
  }),
  card_list_requests: (f) => ({ account_id: f.accountId }),
  card_respond_to_request: (f) => ({
    ...cardEntity(f),
    initiator: f.cards.approverId,
    request_id: takeOne(f.cards.requestsToRespond),
    approved: true,
  }),
  card_edit: (f) => ({
    entity_id: f.partner.rootEntityId,
    card_id: f.cards.cardId,
    name: 'Renamed',
  }),
  card_list_cards: (f) => cardEntity(f),
  card_get_details: (f) => cardAction(f),
  card_update_status: (f) => ({ ...cardAction(f), status: 'active' }),
  card_activate: (f) => {
    const card = takeOne(f.cards.cardsToActivate)
    return { ...cardAction(f), id: card.id, last_4: card.last_4 }
  },
  card_set_pin: (f) => ({ ...cardAction(f), pin: '1234' }),
  card_set_authorization_decisions: () => ({ stand_in: 'decline' }),
  card_get_authorization_decisions: () => ({}),
  ops_sandbox_card_authorize: (f) => ({
    card_id: f.cards.cardId,
    amount: 100,
    merchant_name: 'Sample',
    mcc: '5812',
    merchant_country: 'ZAF',
    channel: 'pos',
    entry_mode: 'chip',
  }),
  ops_sandbox_card_increment: (f) => ({
    authorization_id: f.cards.pendingAuthorizationId,
    amount: 1,
  }),
  ops_sandbox_card_reverse: (f) => ({ authorization_id: takeOne(f.cards.authorizationsToReverse) }),
  ops_sandbox_card_clear: (f) => ({
    authorization_id: takeOne(f.cards.authorizationsToClear),
    amount: 100,
  }),
  ops_sandbox_card_refund: (f) => ({
    card_id: f.cards.cardId,
    amount: 100,
    merchant_name: 'Sample',
  }),
  // The card network's own subjects: the same bodies, on authorizations of their own.
  net_card_authorize: (f) => bodies.ops_sandbox_card_authorize!(f),
  net_card_increment: (f) => bodies.ops_sandbox_card_increment!(f),
  net_card_reverse: (f) => ({
    authorization_id: takeOne(f.cards.networkAuthorizationsToReverse),
  }),
  net_card_clear: (f) => ({
    authorization_id: takeOne(f.cards.networkAuthorizationsToClear),
    amount: 100,
  }),
  net_card_refund: (f) => bodies.ops_sandbox_card_refund!(f),
}

function cardEntity(f: OperationFixture) {
  return { entity_id: f.partner.rootEntityId, account_id: f.accountId }
}

function cardAction(f: OperationFixture) {
  return { account_id: f.accountId, initiator: f.cards.holderId, id: f.cards.cardId }
}

/**
 * Operations with a sample body. It may name operations the table does not have yet (the
 * contract grows while capabilities are built), but every operation the table has must be here.
 */
export const sampledOperationNames: readonly string[] = Object.keys(bodies)

/** A fresh, schema-valid body for the operation, naming the fixture's own resources. */
export function validBody(op: Operation, f: OperationFixture): Record<string, unknown> {
  const factory = bodies[op.name]
  if (!factory)
    throw new Error(`no sample body for operation ${op.name}; add one to operation-bodies.ts`)
  return factory(f)
}

const anyCaseUuid = new RegExp(uuidPattern.source, 'i')

/** The same body with every id replaced by a random UUID that names nothing. */
export function withRandomIds(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(body).map(([k, v]) => [
      k,
      typeof v === 'string' && anyCaseUuid.test(v) ? randomUUID() : v,
    ]),
  )
}

export const partnerOperations = (): Operation[] =>
  allOperations().filter((op) => op.permission !== 'operator' && op.permission !== 'card_network')
export const operatorOperations = (): Operation[] =>
  allOperations().filter((op) => op.permission === 'operator')
export const cardNetworkOperations = (): Operation[] =>
  allOperations().filter((op) => op.permission === 'card_network')

/** The concrete subject; partner operations are sent on `partnerId`'s subject. */
export function subjectOf(op: Operation, partnerId: string): string {
  if (op.permission === 'operator' || op.permission === 'card_network') return subjectFor(op)
  // An `<entity_id>` subject is sent on the partner's root entity (an unknown token as it is).
  return subjectFor(
    op,
    scopeOf(op) === 'entity' ? (partnerRootEntities.get(partnerId) ?? partnerId) : partnerId,
  )
}

/**
 * The token that may use the operation: the operator's for `ops.`, the card network's for
 * `net.card.`, the partner's otherwise.
 */
export function rightfulToken(op: Operation, f: OperationFixture): string {
  if (op.permission === 'card_details') return f.cards.detailsToken
  if (op.permission === 'card_network') return f.cards.networkToken
  return op.permission === 'operator' ? f.tb.operatorToken : f.partner.token
}

/** Sends the operation's request on the fixture partner's subject, as raw bytes or JSON. */
export function send(
  f: OperationFixture,
  op: Operation,
  body: string | Uint8Array | Record<string, unknown>,
  auth: { token?: string; authorization?: string },
  partnerId = f.partner.partnerId,
): Promise<RawReply> {
  const data = typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body)
  return rawRequest(f.tb, subjectOf(op, partnerId), data, auth)
}
