import { contract, type Operation } from '../../contract/index.ts'
import type { Services } from '../../services.ts'
import { Invalid } from '../../errors.ts'
import { endpoint, withHeaders, type Endpoint } from './endpoint.ts'

const { webhooks } = contract

const { entities, users, accounts, transfers, operators, jobs, sandbox } = contract

// The endpoint table: each operation of the contract bound to its use case. Handlers stay
// one line; the wrapper has already authenticated, checked tenancy and validated, so the
// caller's partner is known and the body has its schema's types.
export function endpointTable(s: Services): Endpoint[] {
  const partner = (c: { caller: { partnerId: string | null } }) => c.caller.partnerId as string
  return [
    endpoint(entities.create, (r, c) => s.entities.create(partner(c), r)),
    endpoint(entities.info, (r, c) => s.entities.info(partner(c), r.entity_id)),
    endpoint(entities.list, async (_r, c) => ({ entities: await s.entities.list(partner(c)) })),
    endpoint(entities.getAddress, (r, c) => s.entities.address(partner(c), r.entity_id)),
    endpoint(entities.updateAddress, async ({ entity_id, ...address }, c) => {
      await s.entities.updateAddress(partner(c), entity_id, address)
      return {}
    }),

    endpoint(users.create, (r, c) => s.users.create(partner(c), r)),
    endpoint(users.update, (r, c) => s.users.update(partner(c), r)),
    endpoint(users.get, async (r, c) => ({ user: await s.users.get(partner(c), r.user_id) })),
    endpoint(users.getBirthDetails, (r, c) => s.users.birthDetails(partner(c), r.user_id)),
    endpoint(users.list, async (r, c) => ({ users: await s.users.list(partner(c), r.entity_id) })),

    endpoint(accounts.create, (r, c) => s.accounts.create(partner(c), r.entity_id)),
    endpoint(accounts.getByEntity, (r, c) => s.accounts.byEntity(partner(c), r.entity_id)),
    endpoint(accounts.getDetails, (r, c) => s.accounts.details(partner(c), r.account_id)),

    endpoint(transfers.transfer, (r, c) => s.transfers.transfer(c.caller, r)),
    endpoint(transfers.transferInternal, (r, c) => s.transfers.transferInternal(c.caller, r)),
    endpoint(transfers.list, async (r, c) => {
      const userIds = Array.isArray(r.filter_user_ids) ? r.filter_user_ids : []
      const page = await s.transactions.list(partner(c), r.account_id, { limit: r.limit, cursor: r.cursor, userIds })
      return withHeaders(page.body, { 'Bank-Next-Cursor': page.nextCursor })
    }),
    endpoint(transfers.getTransaction, (r, c) => s.transactions.get(partner(c), r.tx_id)),

    endpoint(operators.partnerCreate, (r) => s.operators.createPartner(r)),
    endpoint(operators.partnerList, async () => ({ partners: await s.operators.listPartners() })),
    endpoint(operators.credentialCreate, (r) => s.operators.issueCredential(r)),
    endpoint(operators.credentialRevoke, (r) => s.credentials.revoke(r.credential_id)),
    endpoint(operators.credentialList, async (r) => ({ credentials: await s.operators.listCredentials(r.partner_id) })),
    endpoint(contract.natsIdentity.credsCreate, (r) => s.operators.issueNatsCreds(r)),
    endpoint(contract.natsIdentity.users, (r) => s.operators.listNatsUsers(r.partner_id)),
    endpoint(contract.natsIdentity.revoke, (r) => s.operators.revokeNatsUser(r.partner_id, r.user_id)),
    endpoint(contract.natsIdentity.suspend, (r) => s.operators.setSuspended(r.partner_id, true)),
    endpoint(contract.natsIdentity.unsuspend, (r) => s.operators.setSuspended(r.partner_id, false)),
    endpoint(contract.limits.partnerLimits, (r) => s.limits.partnerLimits(r)),
    endpoint(operators.entityReview, (r, c) => s.kyb.reviewEntity(c.caller, r.entity_id, r.decision, r.reason)),
    endpoint(operators.entityList, async (r) => ({ entities: await s.entities.listForOperator(r.partner_id) })),
    endpoint(operators.userKyc, async (r, c) => ({ user: await s.kyc.setStatus(c.caller, r.user_id, r.status, r.reason) })),
    endpoint(operators.accountList, (r) => s.operators.listAccounts(r.entity_id)),
    endpoint(operators.accountDeposit, (r, c) => s.dualControl.deposit(c.caller, { account_id: r.account_id, amount: BigInt(r.amount), ref: r.ref })),
    endpoint(operators.transactionReverse, (r, c) => s.dualControl.reverse(c.caller, r)),
    endpoint(contract.approvals.list, (r) => s.dualControl.list(r)),
    endpoint(contract.approvals.approve, (r, c) => s.dualControl.approve(c.caller, r.approval_id)),
    endpoint(contract.approvals.reject, (r, c) => s.dualControl.reject(c.caller, r.approval_id, r.reason)),
    endpoint(operators.accountShow, (r) => s.operators.showAccount(r.account_id)),
    endpoint(operators.accountTransactions, async (r) => {
      const page = await s.transactions.list(await s.operators.partnerOfAccount(r.account_id), r.account_id, { limit: r.limit, cursor: r.cursor })
      return page.body
    }),
    endpoint(operators.ledgerVerify, async () => s.audit.withChainCheck(await s.ledger.verify())),
    endpoint(operators.clearingRun, (r) => (r.detach ? s.clearing.start() : s.clearing.runNow())),
    endpoint(jobs.list, (r) => s.jobs.list(r)),
    endpoint(jobs.get, (r) => s.jobs.get(r.job_id)),
    endpoint(jobs.retry, (r) => s.jobs.retry(r.job_id)),

    endpoint(contract.bulk.initiate, (r, c) => s.bulk.initiate(c.caller, bulkEntity(r, c), r)),
    endpoint(contract.bulk.verify, (r, c) => s.bulk.verify(partner(c), bulkEntity(r, c), r)),
    endpoint(contract.bulk.status, (r, c) => s.bulk.status(partner(c), bulkEntity(r, c), r.bulk_payment_id)),
    endpoint(contract.bulk.cancel, (r, c) => s.bulk.cancel(partner(c), bulkEntity(r, c), r)),
    endpoint(contract.bulk.sandboxOtp, (r) => s.bulk.sandboxOtp(r)),

    endpoint(webhooks.setEndpoint, (r, c) => s.webhooks.setEndpoint(partner(c), r.url)),
    endpoint(webhooks.getEndpoint, (_r, c) => s.webhooks.getEndpoint(partner(c))),
    endpoint(webhooks.rotateSecret, (_r, c) => s.webhooks.rotateSecret(partner(c))),
    endpoint(webhooks.listDeliveries, (r, c) => s.webhooks.listDeliveries(partner(c), r)),
    endpoint(webhooks.redeliver, (r, c) => s.webhooks.redeliver(partner(c), r.event_id)),
    endpoint(sandbox.clock, () => s.sandbox.now()),
    endpoint(sandbox.advance, (r) => (r.detach ? s.sandbox.start(r) : s.sandbox.advance(r))),
    endpoint(sandbox.messages, (r) => s.sandbox.messages(r)),

    endpoint(contract.debit.mandateCreate, (r, c) => s.mandates.create(c.caller, bulkEntity(r, c), r)),
    endpoint(contract.debit.mandateGet, (r, c) => s.mandates.get(bulkEntity(r, c), r.mandate_reference)),
    endpoint(contract.debit.mandateList, (r, c) => s.mandates.list(bulkEntity(r, c), r)),
    endpoint(contract.debit.mandateCancel, (r, c) => s.mandates.cancel(bulkEntity(r, c), r)),
    endpoint(contract.debit.create, (r, c) => s.debit.create(c.caller, bulkEntity(r, c), r)),
    endpoint(contract.debit.list, (r, c) => s.debit.list(bulkEntity(r, c), r)),
    endpoint(contract.debit.cancel, (r, c) => s.debit.cancel(partner(c), bulkEntity(r, c), r)),
    endpoint(contract.debit.status, (r, c) => s.debit.status(partner(c), bulkEntity(r, c), r.debit_order_id)),
    endpoint(contract.debit.operatorList, (r) => s.debit.listForOperator(r)),
    endpoint(contract.debitRuns.run, (r) => (r.detach ? s.debitCollection.start(r.date) : s.debitCollection.runNow(r.date))),
    endpoint(contract.debitRuns.dispute, (r) => s.debitCollection.dispute(r.debit_order_id)),

    endpoint(contract.kyc.uploadKycDocuments, (r, c) => s.kyc.submit(c.caller, r)),
    endpoint(contract.kyb.get, (r, c) => s.kyb.get(partner(c), r.entity_id)),
    endpoint(contract.kyb.submit, (r, c) => s.kyb.submit(c.caller, r)),
    endpoint(contract.kyb.update, (r, c) => s.kyb.update(partner(c), r)),
    endpoint(contract.kyb.updateDirector, (r, c) => s.kyb.updateDirector(partner(c), r)),
    endpoint(contract.kyb.sendVerificationEmail, (r, c) => s.kyb.sendVerificationEmail(partner(c), r)),
    endpoint(contract.reviews.kycList, (r) => s.kyc.list(r)),
    endpoint(contract.reviews.kycShow, (r) => s.kyc.show(r.user_id)),
    endpoint(contract.reviews.kycDecide, (r, c) => s.kyc.decide(c.caller, r)),
    endpoint(contract.reviews.kybList, (r) => s.kyb.list(r)),
    endpoint(contract.reviews.kybShow, (r) => s.kyb.show(r.entity_id)),
    endpoint(contract.reviews.kybDecide, (r, c) => s.kyb.decide(c.caller, r)),
    endpoint(contract.reviews.documentGet, (r) => s.kyc.documentChunk(r)),
    endpoint(contract.audit.list, (r) => s.audit.list(r)),
  ]
}

/** The `<entity_id>` of a bulk or debit subject; a request that repeats it must repeat it exactly. */
function bulkEntity(request: { entity_id?: string | undefined }, context: { subjectId: string | null }): string {
  const entityId = (context.subjectId as string).toLowerCase()
  if (request.entity_id !== undefined && request.entity_id !== entityId) throw Invalid.field('entity_id', 'must be the entity the subject names')
  return entityId
}

export function unboundOperations(table: Endpoint[], operations: Operation[]): Operation[] {
  const bound = new Set(table.map((e) => e.operation))
  return operations.filter((op) => !bound.has(op))
}
