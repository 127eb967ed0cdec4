import { AccountNotActive, assert } from '../errors.ts'
import { takesCredits } from './account-status.ts'
import type { Journal } from './journal.ts'
import type { JournalKind } from './journal-kind.ts'
import { newRowId } from './row-id.ts'

// The journals of card payments (src/cards decides when; this file says what moves):
//  - an approved authorization holds its amount with a Pending `card` row (holdCardPayment);
//    an increment or a partial reversal changes what that row holds (changeCardHold);
//  - a reversal of all that is held, or the expiry of an authorization never cleared,
//    releases the hold; the row becomes Reversed and never posts (releaseCardHold);
//  - a clearing releases the hold and posts the cleared amount to the card settlement
//    account: the authorization's row posts the amount it was written with, and a second
//    `card` row (its child) posts the difference when the clearing differs from it, a
//    credit below it or a debit above it (clearCardPayment);
//  - a merchant's refund credits the account with a `refund` row (refundCardPayment); a
//    blocked or closed account refuses it, as it sends incoming payments back.
// A card row's amount and debit are those of the first authorization: they are in its hash
// (tx-chain.ts) and never change; its hold may.

interface CardRow {
  accountId: string
  txId: string
  /** The merchant, shown to the partner as the row's recipient_name. */
  merchantName: string
  /** The card's last four digits, shown as the row's ref. */
  last4: string
  /** The card's holder. */
  userId: string
}

/** Holds an authorization's amount with a Pending row; false (nothing changes) when short. */
export function holdCardPayment(
  batch: Journal,
  row: CardRow & { amount: bigint; addedBy: string },
): boolean {
  if (!batch.tryHold(row.accountId, row.amount)) return false
  batch.append({
    id: row.txId,
    account_id: row.accountId,
    tx_type: 'card',
    tx_payment_type: 'CARD',
    status: 'Pending',
    amount: row.amount,
    credit: 0n,
    debit: row.amount,
    hold_amount: row.amount,
    added_by: row.addedBy,
    posted: false,
    ref: row.last4,
    recipient_name: row.merchantName,
    user_id: row.userId,
  })
  return true
}

/**
 * Changes what a pending authorization holds from `from` to `to`; false (nothing changes)
 * when a larger hold is not available.
 */
export function changeCardHold(
  batch: Journal,
  hold: { accountId: string; txId: string; from: bigint; to: bigint },
): boolean {
  if (hold.to > hold.from) {
    if (!batch.tryHold(hold.accountId, hold.to - hold.from)) return false
  } else {
    batch.releaseHold(hold.accountId, hold.from - hold.to)
  }
  batch.setHold(hold.txId, hold.accountId, hold.to)
  return true
}

/** Releases all an authorization holds; its row becomes Reversed (it never posted). */
export function releaseCardHold(
  batch: Journal,
  hold: { accountId: string; txId: string; held: bigint },
  reason: string,
): void {
  batch.releaseHold(hold.accountId, hold.held)
  batch.setStatus(hold.txId, hold.accountId, { status: 'Reversed', reason })
}

/**
 * Clears an authorization: releases what it holds and posts `cleared`. Undefined (nothing
 * changes) when a clearing above the hold finds the rest of the amount unavailable.
 * Answers the adjustment row's id, null when the clearing is the row's own amount.
 */
export function clearCardPayment(
  batch: Journal,
  row: CardRow & { authorized: bigint; held: bigint; cleared: bigint },
): { adjustment_tx_id: string | null } | undefined {
  assert(row.cleared > 0n, 'a clearing posts a positive amount')
  if (batch.available(row.accountId) + row.held < row.cleared) return undefined
  batch.releaseHold(row.accountId, row.held)
  const difference = row.cleared - row.authorized
  const adjustmentId = difference === 0n ? null : newRowId()
  const adjustment = (amount: bigint) => {
    assert(adjustmentId, 'an adjustment has its row')
    const credit = amount < 0n
    const size = credit ? -amount : amount
    batch.post([
      { account: row.accountId, amount: -amount, tx_id: adjustmentId },
      { internal: 'settlement:CARD', amount, tx_id: adjustmentId },
    ])
    batch.append({
      id: adjustmentId,
      account_id: row.accountId,
      parent_tx_id: row.txId,
      tx_type: 'card',
      tx_payment_type: 'CARD',
      status: 'Successful',
      amount: size,
      credit: credit ? size : 0n,
      debit: credit ? 0n : size,
      added_by: 'system',
      posted: true,
      ref: row.last4,
      recipient_name: row.merchantName,
      user_id: row.userId,
      status_reason: `cleared ${row.cleared} cents of the ${row.authorized} first authorized`,
    })
  }
  // A credit goes first, so that the account never shows less than it holds on the way.
  if (difference < 0n) adjustment(difference)
  batch.post([
    { account: row.accountId, amount: -row.authorized, tx_id: row.txId },
    { internal: 'settlement:CARD', amount: row.authorized, tx_id: row.txId },
  ])
  batch.setStatus(row.txId, row.accountId, { status: 'Successful', posted: true })
  if (difference > 0n) adjustment(difference)
  return { adjustment_tx_id: adjustmentId }
}

/**
 * A merchant's refund: credits the card's account; answers the `refund` row's id. An account
 * that takes no credits (blocked, closed) refuses it (422 `account_not_active`), as it sends
 * an incoming payment back: the network returns it to the merchant.
 */
export function refundCardPayment(
  batch: Journal,
  refund: Omit<CardRow, 'txId'> & { amount: bigint },
): string {
  const status = batch.account(refund.accountId).status
  if (!takesCredits(status)) {
    throw new AccountNotActive('card_id', refund.accountId, status, 'credited')
  }
  const txId = newRowId()
  batch.post([
    { internal: 'settlement:CARD', amount: -refund.amount, tx_id: txId },
    { account: refund.accountId, amount: refund.amount, tx_id: txId },
  ])
  batch.append({
    id: txId,
    account_id: refund.accountId,
    tx_type: 'refund',
    tx_payment_type: 'CARD',
    status: 'Successful',
    amount: refund.amount,
    credit: refund.amount,
    debit: 0n,
    added_by: 'system',
    posted: true,
    ref: refund.last4,
    recipient_name: refund.merchantName,
    user_id: refund.userId,
  })
  return txId
}

// The kinds the card network writes through the ledger writer's composed door, each in the
// network's own transaction with the card and its authorization locked (cards/card-network.ts).

type HoldChange = Parameters<typeof changeCardHold>[1]

/** An increment (larger: false when not available) or a partial reversal of a hold. */
export const cardHoldChange: JournalKind<HoldChange, boolean> = {
  name: 'card.hold_change',
  accountsOf: (hold) => [hold.accountId],
  record: (journal, hold) => changeCardHold(journal, hold),
}

type HoldRelease = Parameters<typeof releaseCardHold>[1] & { reason: string }

/** A whole reversal or an expiry: the hold released, the row Reversed. */
export const cardHoldRelease: JournalKind<HoldRelease, void> = {
  name: 'card.hold_release',
  accountsOf: (hold) => [hold.accountId],
  record: (journal, hold) => releaseCardHold(journal, hold, hold.reason),
}

type Clearing = Omit<Parameters<typeof clearCardPayment>[1], 'authorized'>

/** A clearing: the authorization's first amount is read under the account's lock. */
export const cardClearing: JournalKind<Clearing, ReturnType<typeof clearCardPayment>> = {
  name: 'card.clearing',
  accountsOf: (row) => [row.accountId],
  transactionsOf: (row) => [row.txId],
  record(journal, row, { transactions }) {
    const first = transactions.get(row.txId)
    assert(first, `card authorization row ${row.txId} exists`)
    return clearCardPayment(journal, { ...row, authorized: first.amount })
  },
}

/** A merchant's refund to the card's account. */
export const cardRefund: JournalKind<Parameters<typeof refundCardPayment>[1], string> = {
  name: 'card.refund',
  accountsOf: (refund) => [refund.accountId],
  record: (journal, refund) => refundCardPayment(journal, refund),
}
