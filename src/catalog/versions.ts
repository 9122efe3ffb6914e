import type { components } from '../../generated/v1';

export type Version = components['schemas']['Version'];

/**
 * What the HTTP layer needs of the software catalog (src/runtime/software): the versions on offer and the
 * parse of a `<software>-<game_version>` id. Software names may contain dashes (`flying-squid`), so an id is
 * resolved against the known software, never split on the first dash.
 */
export interface VersionCatalog {
  list(): Version[];
  resolve(id: string): Version | undefined;
}

/** Adapts the runtime's software catalog (which throws on unknown ids) to the lookup the handlers use. */
export function versionCatalog(source: { list(): Version[] }): VersionCatalog {
  return {
    list: () => source.list(),
    resolve: (id) => source.list().find((v) => v.id === id),
  };
}
