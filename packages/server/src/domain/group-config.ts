// group_config of a session create (docs/api.md#group-config) with the defaults and bounds of docs/api.md#statuses-and-transitions.
import { isSplitMode, SPLIT_MODES, type SplitMode } from './split.ts';

export interface GroupConfigInput {
  min_size?: number;
  max_size?: number;
  default_mode?: string;
  allowed_modes?: string[];
  expiry_hours?: number;
  capture?: string;
}

export interface ResolvedGroupConfig {
  minSize: number;
  maxSize: number;
  defaultMode: SplitMode;
  allowedModes: SplitMode[];
  expiryHours: number;
  /** When cards are charged (docs/api.md#capture-modes). */
  capture: CaptureMode;
}

export const CAPTURE_MODES = ['immediate', 'on_funded'] as const;
type CaptureMode = (typeof CAPTURE_MODES)[number];

/** Card holds last about 7 days at the networks; an on_funded group must end within 6 (144 hours). */
const MAX_ON_FUNDED_EXPIRY_HOURS = 144;

/** Bounds of a group: its size, its expiry, and what a member may be called. */
export const GROUP_LIMITS = {
  minSize: 1,
  maxSize: 50,
  minExpiryHours: 1,
  maxExpiryHours: 168,
  maxNameLength: 200,
  maxEmailLength: 254,
} as const;

const GROUP_DEFAULTS = {
  minSize: 2,
  maxSize: 10,
  defaultMode: 'equal' as SplitMode,
  expiryHours: 48,
} as const;

/** The config with defaults filled in, or every rule it breaks (named by their wire path). */
export function resolveGroupConfig(
  input: GroupConfigInput | undefined,
): { ok: true; config: ResolvedGroupConfig } | { ok: false; errors: string[] } {
  const errors: string[] = [];
  const given = input ?? {};
  for (const name of ['min_size', 'max_size'] as const) {
    const value = given[name];
    if (value === undefined) continue;
    if (value < GROUP_LIMITS.minSize)
      errors.push(`group_config.${name} must be at least ${GROUP_LIMITS.minSize}`);
    if (value > GROUP_LIMITS.maxSize)
      errors.push(`group_config.${name} must be at most ${GROUP_LIMITS.maxSize}`);
  }
  // A size left out follows the one given, so that min_size 20 alone or max_size 1 alone is a valid config.
  const minSize =
    given.min_size ??
    Math.max(
      GROUP_LIMITS.minSize,
      Math.min(GROUP_DEFAULTS.minSize, given.max_size ?? GROUP_DEFAULTS.minSize),
    );
  const maxSize = given.max_size ?? Math.min(GROUP_LIMITS.maxSize, Math.max(GROUP_DEFAULTS.maxSize, minSize));
  if (errors.length === 0 && minSize > maxSize) {
    errors.push(
      `group_config.min_size (${minSize}) must not be greater than group_config.max_size (${maxSize})`,
    );
  }

  const allowed = given.allowed_modes ?? [...SPLIT_MODES];
  const unknown = allowed.filter((m) => !isSplitMode(m));
  for (const mode of unknown) {
    errors.push(`group_config.allowed_modes has unknown mode "${mode}"; use ${SPLIT_MODES.join(', ')}`);
  }
  if (allowed.length === 0) errors.push('group_config.allowed_modes must name at least one mode');
  const allowedModes = [...new Set(allowed.filter(isSplitMode))];

  const defaultMode = given.default_mode ?? (allowedModes.includes('equal') ? 'equal' : allowedModes[0]);
  if (defaultMode !== undefined && !isSplitMode(defaultMode)) {
    errors.push(`group_config.default_mode must be one of ${SPLIT_MODES.join(', ')}`);
  } else if (defaultMode !== undefined && !allowedModes.includes(defaultMode)) {
    errors.push(
      `group_config.default_mode "${defaultMode}" must be one of group_config.allowed_modes (${allowedModes.join(', ')})`,
    );
  }

  const expiryHours = given.expiry_hours ?? GROUP_DEFAULTS.expiryHours;
  if (expiryHours < GROUP_LIMITS.minExpiryHours || expiryHours > GROUP_LIMITS.maxExpiryHours) {
    errors.push(
      `group_config.expiry_hours must be from ${GROUP_LIMITS.minExpiryHours} to ${GROUP_LIMITS.maxExpiryHours}`,
    );
  }
  const capture = (given.capture ?? 'immediate') as CaptureMode;
  if (!CAPTURE_MODES.includes(capture)) {
    errors.push(`group_config.capture must be one of ${CAPTURE_MODES.join(', ')}, got "${given.capture}"`);
  } else if (capture === 'on_funded' && expiryHours > MAX_ON_FUNDED_EXPIRY_HOURS) {
    errors.push(
      `group_config.expiry_hours must be at most ${MAX_ON_FUNDED_EXPIRY_HOURS} with capture on_funded: card holds ` +
        'last about 7 days, so the group must be funded or let go before they lapse',
    );
  }
  if (errors.length > 0 || defaultMode === undefined || !isSplitMode(defaultMode)) {
    return { ok: false, errors };
  }
  return { ok: true, config: { minSize, maxSize, defaultMode, allowedModes, expiryHours, capture } };
}
