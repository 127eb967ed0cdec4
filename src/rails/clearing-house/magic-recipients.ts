/**
 * Magic recipient values of the sandbox's clearing house (documented in docs/guides/payments.md)
 * that let partners test every outcome. Any other recipient is paid.
 */
export const magicRecipients = {
  /**
   * The recipient's bank declines (e.g. account closed): the transfer ends `Failed`, hold released.
   */
  failed_account_number: '4000000002',
  /** No such account: the transfer ends `Invalid`, no money moves. */
  invalid_account_number: '4000000010',
  /**
   * Paid, then returned by the recipient's bank at the next clearing run: `Reversed`, money
   * credited back.
   */
  returned_account_number: '4000000028',
  /** A branch code no bank uses: `Invalid`. */
  invalid_branch_code: '000000',
} as const

