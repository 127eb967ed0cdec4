import type { Module } from '../module.ts'

// Users of entities, with their KYC state. Its table came with 0001_foundation (operators).
export const usersModule: Module = {
  name: 'users',
}
