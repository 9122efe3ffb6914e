// What a server may be created or changed to, beyond the spec's schemas (openapi/v1.yaml createServer,
// updateServer): a plan the service offers, a version the catalog lists, a backup schedule within the plan, and
// settings the software defines. The lifecycle asks these before it writes (lifecycle.ts), so a handler makes one
// call (docs/conventions.md "Handlers").
import type { Plan } from '../../catalog/plans';
import type { VersionCatalog } from '../../catalog/versions';
import { AppError, type FieldError } from '../../errors';
import type { components } from '../../../generated/v1';
import type { BackupSchedule, NewServer } from '../../store/servers-repo';
import { cronProblem } from './cron';
import { normalizeDnsName, type DnsSettings } from '../../dns/settings';
import type { SettingValues } from '../software/settings';
import type { SettingsService } from './server-settings';

export type CreateServerRequest = components['schemas']['CreateServerRequest'];

export interface ServerRulesDeps {
  /** The plans a server is created or changed to (the service's, as GET /v1/plans lists them). */
  plans: readonly Plan[];
  versions: Pick<VersionCatalog, 'resolve'>;
  /** Settings given at create are checked by their owner. */
  settingsService: Pick<SettingsService, 'checkNew'>;
  /** The names the operator keeps, when DNS_ZONE is set (src/dns/settings.ts); null: the service publishes no names. */
  dns: Pick<DnsSettings, 'reserved'> | null;
}

/**
 * A `dns_name` from a request as it is stored (src/dns/settings.ts normalizeDnsName): lowercase ASCII, or null
 * to have none. 409 dns_not_configured without DNS_ZONE, dns_name_reserved for the operator's names, 400 for a
 * name that is no DNS label. That another server has it is the database's to say (server-writes.ts nameTaken).
 */
export function checkDnsName(dns: ServerRulesDeps['dns'], typed: string | null | undefined): string | null | undefined {
  if (typed === undefined || typed === null) return typed;
  if (!dns) throw new AppError('dns_not_configured', 'This service publishes no DNS names (the operator has not set DNS_ZONE); leave dns_name out.', [{ pointer: '/body/dns_name', detail: 'no DNS zone' }]);
  const result = normalizeDnsName(typed, dns);
  if ('name' in result) return result.name;
  if (result.refused === 'reserved') {
    throw new AppError('dns_name_reserved', `The operator keeps the name "${typed}" for themselves; pick another.`, [{ pointer: '/body/dns_name', detail: 'is kept by the operator' }]);
  }
  const detail = 'must be one label of 1 to 63 letters, digits and hyphens, not starting or ending with a hyphen (no dots)';
  throw new AppError('validation_failed', `The DNS name "${typed.slice(0, 80)}" ${detail}.`, [{ pointer: '/body/dns_name', detail }]);
}

/**
 * The field errors of a schedule for a plan keeping `planBackups` backups (400 validation_failed, pointers under
 * `/body/backup_schedule`): a cron expression of five fields that parses, and `keep` within the plan's. That a
 * schedule has exactly one of `every_hours` and `cron` is the schema's (openapi/v1.yaml BackupSchedule, a oneOf).
 */
export function scheduleErrors(schedule: BackupSchedule, planBackups: number): FieldError[] {
  const at = (field: string, detail: string): FieldError => ({ pointer: `/body/backup_schedule${field}`, detail });
  const errors: FieldError[] = [];
  const problem = 'cron' in schedule ? cronProblem(schedule.cron) : null;
  if (problem) errors.push(at('/cron', problem.slice(0, 200)));
  if (schedule.keep !== undefined && schedule.keep > planBackups) errors.push(at('/keep', `is more than the plan keeps (${planBackups})`));
  return errors;
}

/** 400 unknown_plan unless the service offers plan `id`. */
export function checkPlan(plans: readonly Plan[], id: string): void {
  if (!plans.some((p) => p.id === id)) {
    throw new AppError('unknown_plan', `There is no plan "${id}"; GET /v1/plans lists them.`, [{ pointer: '/body/plan', detail: 'no such plan' }]);
  }
}

/** A backup schedule's rules beyond its schema (backup-schedule.ts scheduleErrors) for plan `planId`: 400 validation_failed. */
export function checkBackupSchedule(plans: readonly Plan[], schedule: BackupSchedule, planId: string): void {
  const errors = scheduleErrors(schedule, plans.find((p) => p.id === planId)?.backups ?? 1);
  if (errors.length > 0) throw new AppError('validation_failed', 'The backup schedule is not valid.', errors);
}

/**
 * An updateServer patch checked: a plan the service offers (unknown_plan), a backup schedule within the plan it
 * will have (`currentPlan` reads the server's when the patch keeps it; undefined: the server is gone, 404).
 */
export function checkPatch(plans: readonly Plan[], patch: { plan?: string; backup_schedule?: BackupSchedule | null }, currentPlan: () => string | undefined): void {
  if (patch.plan !== undefined) checkPlan(plans, patch.plan);
  if (!patch.backup_schedule) return;
  const plan = patch.plan ?? currentPlan();
  if (plan === undefined) throw new AppError('server_not_found', 'There is no such server.');
  checkBackupSchedule(plans, patch.backup_schedule, plan);
}

/** A createServer request checked (unknown_plan, unknown_version, validation_failed), as the row and settings to write. */
export function newServerFrom(deps: ServerRulesDeps, body: CreateServerRequest): { input: NewServer; settings: SettingValues } {
  checkPlan(deps.plans, body.plan);
  const version = deps.versions.resolve(body.version);
  if (!version) {
    throw new AppError('unknown_version', `There is no version "${body.version}"; GET /v1/versions lists them.`, [
      { pointer: '/body/version', detail: 'no such version' },
    ]);
  }
  if (body.backup_schedule) checkBackupSchedule(deps.plans, body.backup_schedule, body.plan);
  const input: NewServer = {
    name: body.name, plan: body.plan, version: version.id, software: version.software, game_version: version.game_version,
    idle_stop_minutes: body.idle_stop_minutes ?? null, backup_schedule: body.backup_schedule ?? null,
    dns_name: checkDnsName(deps.dns, body.dns_name) ?? null,
  };
  const settings = deps.settingsService.checkNew(version.software, body.plan, body.settings ?? {});
  return { input, settings };
}
