import type { QuotasRepo } from '../../store/quotas-repo';
import type { Handlers } from '../types';

/** Account tag: getQuota (docs/conventions.md "Quotas"). Any valid token of the account may read it. */
export function accountHandlers(deps: { quotas: QuotasRepo }): Handlers {
  return {
    getQuota: ({ principal }) => ({ status: 200, body: deps.quotas.get(principal.userId) }),
  };
}
