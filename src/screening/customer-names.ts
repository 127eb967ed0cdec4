import type { Screened } from './screening-tables.ts'

// What the bank screens of a customer: a business by its name and its trading name (as an
// entity), a person by the name the partner gave and by first and last name (as an
// individual), with the date of birth and the ID number. The same facts on create, update
// and each re-screening, so that a decision on them holds until they change.

export interface EntityFacts {
  entity_type: 'business' | 'personal'
  name?: string | null | undefined
  trading_name?: string | null | undefined
  first_name?: string | null | undefined
  last_name?: string | null | undefined
  date_of_birth?: Date | string | null | undefined
  id_number?: string | null | undefined
}

export interface PersonFacts {
  first_name: string
  last_name: string
  date_of_birth?: Date | string | null | undefined
  id_number?: string | null | undefined
}

export function entityScreened(entity: EntityFacts): Screened[] {
  if (entity.entity_type === 'business') {
    return distinctNames([entity.name, entity.trading_name]).map((name) =>
      ({ name, kind: 'entity' as const }))
  }
  const person = { first_name: entity.first_name ?? '', last_name: entity.last_name ?? '',
    date_of_birth: entity.date_of_birth, id_number: entity.id_number }
  const [first, ...others] = personScreened(person)
  const given = distinctNames([entity.name]).filter((name) => name !== first?.name)
  return [...(first ? [first] : []), ...others,
    ...given.map((name) => ({ ...first, name, kind: 'individual' as const }))]
}

export function personScreened(person: PersonFacts): Screened[] {
  const name = `${person.first_name} ${person.last_name}`.trim()
  if (name === '') return []
  return [{ name, kind: 'individual', ...dayOf(person.date_of_birth),
    ...(person.id_number?.trim() ? { id_number: person.id_number.trim() } : {}) }]
}

function dayOf(value: Date | string | null | undefined): { date_of_birth?: string } {
  if (!value) return {}
  const time = value instanceof Date ? value.getTime() : Date.parse(value)
  return Number.isNaN(time) ? {} : { date_of_birth: new Date(time).toISOString().slice(0, 10) }
}

function distinctNames(names: Array<string | null | undefined>): string[] {
  const seen = new Set<string>()
  return names.map((name) => name?.trim() ?? '').filter((name) => {
    const key = name.toLowerCase()
    if (name === '' || seen.has(key)) return false
    seen.add(key)
    return true
  })
}
