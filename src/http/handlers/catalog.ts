import { plans } from '../../catalog/plans';
import type { VersionCatalog } from '../../catalog/versions';
import type { Handlers } from '../types';

/** Catalog tag: listPlans, listVersions. */
export function catalogHandlers(deps: { versions: VersionCatalog }): Handlers {
  return {
    listPlans: () => ({ status: 200, body: { data: [...plans] } }),
    listVersions: () => ({ status: 200, body: { data: deps.versions.list() } }),
  };
}
