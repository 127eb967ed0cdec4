// The one error of the ISO 20022 code for a value a message cannot carry: a negative or
// fractional amount, a name longer than its schema type allows, a character XML 1.0 cannot
// hold, a count that does not match what was written. It names the field and the rule (and
// the payment, when there is one), so that a caller meeting it at the rail (a programmer's
// mistake: the value should have been refused when it came in) can log it whole, and one that
// checks a value early can turn it into a 4xx.

export class IsoValueError extends Error {
  constructor(
    /** Where the value goes, as the message's path says it (e.g. `Cdtr/Nm`) or the row's key. */
    readonly field: string,
    /** What is wrong, in words that name the rule (e.g. `is longer than Max140Text`). */
    readonly rule: string,
    /** The item it belongs to, when the message holds many (e.g. `payment <tx_id>`). */
    readonly item?: string,
  ) {
    super(`${item === undefined ? '' : `${item}: `}${field}: ${rule}`)
    this.name = 'IsoValueError'
  }
}
