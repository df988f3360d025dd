import { ok } from '../../tools/result';
import type { JsonSchema, Tool } from '../../tools/tool';

/** Structured output for a one-shot child started with an outputSchema (child-local). */
export function createSubmitResultTool(schema: JsonSchema, onSubmit: (value: unknown) => void): Tool {
  return {
    name: 'submit_result',
    description: 'Submit your result in the structured form your parent asked for. Call it once, when the work is done, then finish with a short summary.',
    parameters: schema,
    async execute(args) {
      onSubmit(args);
      return ok('Result recorded. Finish your turn with a one-line summary.');
    },
  };
}
