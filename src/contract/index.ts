import { jobOperations } from '../jobs/jobs-contract.ts'
import { accountOperations, accountOperatorOperations } from '../accounts/account-contract.ts'
import { credentialOperations } from '../auth/credential-contract.ts'
import { entityOperations, entityOperatorOperations } from '../entities/entity-contract.ts'
import { moneyOperations } from '../money/money-contract.ts'
import { partnerOnboardingOperations } from '../partners/partner-contract.ts'
import { clearingOperations } from '../transfers/clearing-contract.ts'
import { transactionOperatorOperations, transferOperations } from '../transfers/transfer-contract.ts'
import { userOperations } from '../users/user-contract.ts'
import { bulkOperations } from '../bulk/bulk-contract.ts'
import { webhookOperations } from '../webhooks/webhook-contract.ts'
import { sandboxOperations } from '../sandbox/sandbox-contract.ts'
import { debitOperations } from '../debit/debit-contract.ts'
import { debitRunOperations } from '../debit/debit-collection-contract.ts'
import { kybOperations, kycDecisionOperations, kycOperations, reviewOperations } from '../kyc/kyc-contract.ts'
import { natsIdentityOperations } from '../nats-identity/nats-identity-contract.ts'
import { limitsOperations } from '../limits/limits-contract.ts'
import { approvalOperations, auditOperations, consoleSessionOperations } from '../audit/audit-contract.ts'
import {
  cardDecisionOperations, cardNetworkOperations, cardOperations, networkCardOperations,
} from '../cards/card-contract.ts'
import { summaryOperations } from '../summary/summary-contract.ts'
import { pendingPaymentOperations } from '../transfers/pending-payment-contract.ts'
import { incomingOperations } from '../incoming/incoming-contract.ts'
import {
  accountStatusOperations, accountStatusOperatorOperations,
} from '../account-status/account-status-contract.ts'
import { railsOpsOperations } from '../rails/rails-ops-contract.ts'
import { reconciliationOperations } from '../reconciliation/reconciliation-contract.ts'
import { statementOperations } from '../statements/statements-contract.ts'
import { screeningOperations } from '../screening/screening-contract.ts'
import { monitoringOperations } from '../monitoring/monitoring-contract.ts'
import type { Operation } from './operation.ts'

// The `operators` group: the `ops.` operations that came with operator onboarding. Each is
// declared beside the capability that serves it; the group is gathered here, one by one,
// because its name is the tag of these operations in docs/asyncapi.yaml and its order the
// order of docs/asyncapi.yaml, docs/sdk-methods.md and `bank --help` (a client's SDK method
// comes from each operation's own `sdk`, not from the group).
const operatorOperations = {
  partnerCreate: partnerOnboardingOperations.partnerCreate,
  partnerList: partnerOnboardingOperations.partnerList,
  credentialCreate: credentialOperations.credentialCreate,
  credentialRevoke: credentialOperations.credentialRevoke,
  credentialList: credentialOperations.credentialList,
  credentialCreateCardNetwork: credentialOperations.credentialCreateCardNetwork,
  credentialListCardNetworks: credentialOperations.credentialListCardNetworks,
  entityReview: kycDecisionOperations.entityReview,
  entityList: entityOperatorOperations.entityList,
  userKyc: kycDecisionOperations.userKyc,
  accountList: accountOperatorOperations.accountList,
  accountDeposit: moneyOperations.accountDeposit,
  transactionReverse: moneyOperations.transactionReverse,
  accountShow: accountOperatorOperations.accountShow,
  accountTransactions: transactionOperatorOperations.accountTransactions,
  ledgerVerify: moneyOperations.ledgerVerify,
  clearingRun: clearingOperations.clearingRun,
}

// Every operation the service offers, in groups. This table is the only list of them:
// the endpoint table binds a handler to each (a test checks that none is left without
// one), the SDK's method groups and the operator CLI's commands are derived from it, and
// so is the AsyncAPI document.
export const contract = {
  entities: entityOperations,
  users: userOperations,
  accounts: accountOperations,
  accountStatus: accountStatusOperations,
  accountStatusOperators: accountStatusOperatorOperations,
  transfers: transferOperations,
  payments: pendingPaymentOperations,
  incoming: incomingOperations,
  statements: statementOperations,
  rails: railsOpsOperations,
  reconciliation: reconciliationOperations,
  screening: screeningOperations,
  operators: operatorOperations,
  natsIdentity: natsIdentityOperations,
  limits: limitsOperations,
  jobs: jobOperations,
  bulk: bulkOperations,
  webhooks: webhookOperations,
  sandbox: sandboxOperations,
  debit: debitOperations,
  debitRuns: debitRunOperations,
  cards: { ...cardOperations, ...cardDecisionOperations },
  cardNetwork: cardNetworkOperations,
  network: networkCardOperations,
  kyc: kycOperations,
  kyb: kybOperations,
  reviews: reviewOperations,
  audit: auditOperations,
  approvals: approvalOperations,
  consoleSessions: consoleSessionOperations,
  summary: summaryOperations,
  monitoring: monitoringOperations,
} as const

export type Contract = typeof contract

export function allOperations(): Operation[] {
  return Object.values(contract).flatMap((group) => Object.values(group) as Operation[])
}

/** An operation with the place the contract gives it and the SDK method that calls it. */
export interface ContractEntry {
  /** The contract's group and key: `contract.<group>.<key>`. */
  group: string
  key: string
  operation: Operation
  /**
   * `BankClient` for partner operations, `OperatorClient` for `ops.` operations,
   * `CardNetworkClient` for the card network's `net.card.` operations.
   */
  client: ClientKind
  /** The SDK method: `client.<sdkGroup>.<sdkMethod>(request)`. */
  sdkGroup: string
  sdkMethod: string
}

export function contractEntries(): ContractEntry[] {
  return Object.entries(contract).flatMap(([group, operations]) =>
    Object.entries(operations as Record<string, Operation>).map(([key, operation]) => {
      const [sdkGroup, sdkMethod] = (operation.sdk ?? `${group}.${key}`).split('.') as [string,
        string]
      const client = clientOf(operation)
      return { group, key, operation, client, sdkGroup, sdkMethod }
    }),
  )
}

/** The SDK clients, one per kind of credential. */
export type ClientKind = 'partner' | 'operator' | 'card_network'

/** The client that offers an operation: the kind of credential that may call it. */
export function clientOf(operation: Operation): ClientKind {
  const permission = operation.permission
  return permission === 'operator' || permission === 'card_network' ? permission : 'partner'
}

/** The contract group of each operation (the AsyncAPI document's tags). */
export function groupOf(op: Operation): string | undefined {
  return contractEntries().find((entry) => entry.operation === op)?.group
}

// The same derivation in types, so the SDK's method groups are typed from the contract:
// each operation with its SDK path (its `sdk`, else `<group>.<key>`) and its caller.
type PathOf<O, G, K> = O extends { sdk?: infer S }
  ? [NonNullable<S>] extends [never]
    ? `${G & string}.${K & string}`
    : NonNullable<S>
  : `${G & string}.${K & string}`

export type SdkEntry = { [G in keyof Contract]: { [K in keyof Contract[G]]: {
  path: PathOf<Contract[G][K], G, K>; op: Contract[G][K] } }[keyof Contract[G]] }[keyof Contract]

/** The entries one client offers: operator operations, the card network's, or the partner's. */
export type SdkEntryFor<Client extends ClientKind> =
  SdkEntry extends infer E ? (E extends { op: { permission: infer P } } ? (
    (P extends 'operator' | 'card_network' ? P : 'partner') extends Client ? E : never) : never)
    : never

export * from './operation.ts'
