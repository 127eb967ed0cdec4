import { createHash } from 'node:crypto'
import { Unavailable } from '../errors.ts'

// The company registry the bank asks for a business's directors, by registration number
// (the incumbent asks a credit bureau). A provider behind an interface: the simulated
// registry below decides by the number's last two digits, so that every answer a real
// registry gives can be met on purpose.

export interface RegistryDirector {
  /** Stable for a registration number: the same director has the same id on every lookup. */
  id: string
  name: string
  id_type: string
}

export interface CompanyRegistry {
  /**
   * The directors on record; an empty list when the registry has none yet (try later).
   * Throws Unavailable when the registry cannot be asked.
   */
  directors(registrationNumber: string): Promise<RegistryDirector[]>
}

/** Magic registration numbers of the simulated registry, by their last two digits. */
export const simulated_registry_magic = {
  /** `…07`: two directors. */
  two_directors: '07',
  /** `…00`: no directors on record yet (a new registration); ask again later. */
  no_directors_yet: '00',
  /** `…99`: the lookup fails (503). */
  lookup_fails: '99',
} as const

const first_names = ['Thandi', 'Pieter', 'Aisha', 'Sipho', 'Johanna', 'Rajesh', 'Lerato', 'Michael']
const last_names = ['Nkosi', 'van der Merwe', 'Patel', 'Dlamini', 'Botha', 'Naidoo', 'Mokoena',
  'Smith']

export class SimulatedCompanyRegistry implements CompanyRegistry {
  async directors(registrationNumber: string): Promise<RegistryDirector[]> {
    const tail = registrationNumber.slice(-2)
    if (tail === simulated_registry_magic.lookup_fails) throw new Unavailable(
      'the company registry could not be reached; try again later')
    if (tail === simulated_registry_magic.no_directors_yet) return []
    const count = tail === simulated_registry_magic.two_directors ? 2 : 1
    return Array.from({ length: count }, (_, i) => {
      const digest = createHash('sha256').update(`${registrationNumber}:director:${i}`).digest()
      const first = first_names[digest[16]! % first_names.length]
      const last = last_names[digest[17]! % last_names.length]
      return { id: uuidFrom(digest), name: `${first} ${last}`, id_type: 'National' }
    })
  }
}

/** A version-8 (custom) UUID from a digest's first 16 bytes. */
function uuidFrom(digest: Buffer): string {
  const bytes = Buffer.from(digest.subarray(0, 16))
  bytes[6] = (bytes[6]! & 0x0f) | 0x80
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  const hex = bytes.toString('hex')
  return [hex.slice(0, 8), hex.slice(8, 12), hex.slice(12, 16), hex.slice(16, 20), hex.slice(20)]
    .join('-')
}
