#!/usr/bin/env bash
# Plants each deliberate bug of issues 21 and 32 (item 5) and the two survivors of issue 41
# (item 9: 18, 19) again and checks that the named test fails.
#
# Each line of the table: a patch in this folder, then the test (exact name in the `root`
# test binary) that must fail with it applied. The patch is reverted afterwards whatever
# happens. Usage: scripts/mutants/run.sh [name-substring]   (needs a clean work tree)
set -uo pipefail
cd "$(dirname "$0")/../.."
here=scripts/mutants

table=(
  "01-softmax-no-max-subtraction           planted::planted_softmax_inputs_beyond_exp_range"
  "02-fused-attention-no-rescale           planted::planted_fused_attention_largest_score_in_the_second_key_block"
  "03-sampler-ignores-temperature          planted::planted_sampler_honours_temperature"
  "04-sin-cos-wrong-sign-in-one-quadrant   planted::planted_rotation_mixers_sin_cos_in_every_quadrant"
  "05-loader-swaps-ln-1-and-ln-2           planted::planted_loader_matches_an_independent_reader"
  "06-adam-wrong-bias-correction           planted::planted_adam_matches_an_independent_reference"
  "07-reference-matmul-drops-a-term        matmul::matmul_on_the_cpu_context_is_the_reference"
  "08-reference-causal-softmax-off-by-one  nn::contract_ops_on_the_cpu_context"
  "09-fusion-ignores-rewritten-inputs      planted::planted_fusion_across_a_dispatch_that_rewrites_an_input"
  "10-fusion-ignores-the-view-of-the-output planted::planted_fusion_through_a_transposed_view_of_the_producer"
  "11-plan-replay-in-parts-drops-a-dispatch plan::gpt2_plan_generation_equals_eager_at_every_position"
  "12-plan-uniform-slots-overlap           plan::plan_replay_equals_eager_and_follows_its_inputs"
  "13-generator-skips-re-uploading-the-prompt planted::planted_generator_rewrites_the_prompt_of_a_length_it_has_a_plan_for"
  "14-fusion-skips-the-dispatch-right-after-the-producer planted::planted_fusion_across_a_dispatch_that_rewrites_an_input"
  "15-lookback-publishes-the-exclusive-carry scan::scan_lookback_is_one_pass_where_offered_and_matches_the_reference"
  "16-lookback-reads-the-nearest-chunks-aggregate-at-every-step planted::planted_lookback_folds_every_predecessors_aggregate_back_to_the_first_chunk"
  "17-lookback-fallback-recomputes-its-own-chunk scan::stress_lookback_carries_repeat_without_a_hang_or_a_wrong_value"
  "18-adam-l2-also-applies-the-decoupled-shrink optim::optim_adam_with_l2_decay_matches_a_hand_computation"
  "19-software-chunk-count-rounds-down     mixer::mixer_angle_fused_lengthened_chunks_that_do_not_divide_t"
)

if ! git diff --quiet; then
  echo "mutants: the work tree has changes; commit or stash them first" >&2
  exit 2
fi

caught=0; missed=0; broken=0
for row in "${table[@]}"; do
  read -r name test <<<"$row"
  [[ -n "${1:-}" && "$name" != *"$1"* ]] && continue
  if ! git apply "$here/$name.patch"; then
    echo "BROKEN  $name: the patch no longer applies"; broken=$((broken + 1)); continue
  fi
  if cargo test --release --test root -- --exact "$test" >"/tmp/mutant-$name.log" 2>&1; then
    echo "MISSED  $name: $test passed with the bug planted (log: /tmp/mutant-$name.log)"; missed=$((missed + 1))
  else
    echo "CAUGHT  $name: $test failed"; caught=$((caught + 1))
  fi
  git apply -R "$here/$name.patch"
done
echo "mutants: $caught caught, $missed missed, $broken broken"
[[ $missed -eq 0 && $broken -eq 0 ]]
