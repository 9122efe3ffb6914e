import { AppError } from '../../errors';
import type { Plan } from '../../catalog/plans';
import type { VersionCatalog } from '../../catalog/versions';
import type { Handlers } from '../types';

/** Catalog tag: listPlans, listVersions, getVersion. */
export function catalogHandlers(deps: { versions: VersionCatalog; plans: readonly Plan[] }): Handlers {
  return {
    listPlans: () => ({ status: 200, body: { data: [...deps.plans] } }),
    listVersions: () => ({ status: 200, body: { data: deps.versions.list() } }),
    getVersion: ({ path }) => {
      const version = deps.versions.detail(path.version_id);
      if (!version) throw new AppError('not_found', `There is no version "${path.version_id}"; GET /v1/versions lists them.`);
      return { status: 200, body: version };
    },
  };
}
