import * as assert from 'node:assert/strict';
import { approvalWithSource, effectiveApproval } from '../../../src/core/policy/approval';
import { effectiveSandbox, sandboxWithSource } from '../../../src/core/policy/sandbox';
import type { SessionEvent } from '../../../src/core/session/events';
import { policyOverrides } from '../../../src/core/session/folds';

const at = '2026-01-01T00:00:00.000Z';

describe('effective sandbox and approval policy', () => {
  it('fall back to the deployment default when the session has no override', () => {
    const o = policyOverrides([]);
    assert.equal(effectiveSandbox(o, 'workspace-write'), 'workspace-write');
    assert.equal(effectiveApproval(o, 'ask'), 'ask');
    assert.deepEqual(sandboxWithSource(o, 'read-only'), { value: 'read-only', source: 'deployment' });
    assert.deepEqual(approvalWithSource(o, 'never'), { value: 'never', source: 'deployment' });
  });

  it('take the last override event, keeping who set it', () => {
    const events: SessionEvent[] = [
      { seq: 0, at, type: 'sandbox/mode', mode: 'read-only', source: 'delegation' },
      { seq: 1, at, type: 'approval/policy', policy: 'never', source: 'delegation' },
      { seq: 2, at, type: 'sandbox/mode', mode: 'full-access', source: 'user' },
    ];
    const o = policyOverrides(events);
    assert.equal(effectiveSandbox(o, 'workspace-write'), 'full-access');
    assert.deepEqual(sandboxWithSource(o, 'workspace-write'), { value: 'full-access', source: 'user', seq: 2 });
    assert.equal(effectiveApproval(o, 'ask'), 'never');
    assert.deepEqual(approvalWithSource(o, 'ask'), { value: 'never', source: 'delegation', seq: 1 });
  });
});
