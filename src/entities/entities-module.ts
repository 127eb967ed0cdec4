import type { Module } from '../module.ts'

// Entities: the owners of users and accounts. Its table came with 0001_foundation (operators).
export const entitiesModule: Module = {
  name: 'entities',
}
