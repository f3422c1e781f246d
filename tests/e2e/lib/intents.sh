# intents.sh — the small generated intent set of the classify end-to-end tests (sourced, not run:
# tests/run-all.sh runs only tests/e2e/*.sh).
#
#   . "$(dirname "$0")/lib/intents.sh"     (before the script leaves the repository's root)
#   gen_intents > data.tsv                 144 lines "utterance<TAB>label": music.play,
#                                          music.pause and navigation.navigation, 48 each
#   intents_data                           data.tsv and its Example stream data.pb in the
#                                          current directory (needs $GYRO)
#   intents_split_data                     train.tsv/train.pb and a held-out dev.tsv/dev.pb of
#                                          the same intents with other fillers (gen_intents_split
#                                          train|dev), in the current directory (needs $GYRO)
# shellcheck shell=bash

# The three intents told apart by their words; $1 and $2 name the arrays of filler words said
# before an utterance and after a pause command.
intents_with_fillers() {
  local -n pre_=$1 post_=$2
  for a in 播放 来一首 我想听; do for b in 稻香 晴天 七里香 夜曲; do for p in "${pre_[@]}"; do
    echo -e "${p}${a}${b}\tmusic.play"; done; done; done
  for a in 暂停 停止播放 别放了; do for p in "${pre_[@]}"; do for q in "${post_[@]}"; do
    echo -e "${p}${a}${q}\tmusic.pause"; done; done; done
  for a in 导航到 带我去 去; do for b in 北京西站 机场 公司 学校; do for p in "${pre_[@]}"; do
    echo -e "${p}${a}${b}\tnavigation.navigation"; done; done; done
}

gen_intents() {
  local pre=("" "请" "帮我" "麻烦") post=("" "吧" "一下" "好吗")
  intents_with_fillers pre post
}

intents_data() {
  gen_intents > data.tsv
  "$GYRO" import -f tsv -q -o data.pb data.tsv
}

# The same intents with fillers of their own for the train and the dev split ($1: train or dev),
# so that dev utterances are not training utterances.
gen_intents_split() {
  local pre post
  # shellcheck disable=SC2034  # read by intents_with_fillers through its namerefs
  if [ "$1" = train ]; then pre=("" "请" "帮我" "麻烦"); post=("" "吧" "一下"); else pre=("能不能" "你" ""); post=("好吗" "呀"); fi
  intents_with_fillers pre post
}

intents_split_data() {
  gen_intents_split train > train.tsv
  gen_intents_split dev > dev.tsv
  "$GYRO" import -f tsv -q -o train.pb train.tsv
  "$GYRO" import -f tsv -q -o dev.pb dev.tsv
}
