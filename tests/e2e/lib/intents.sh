# intents.sh — the small generated intent set of the classify end-to-end tests (sourced, not run:
# tests/run-all.sh runs only tests/e2e/*.sh).
#
#   . "$(dirname "$0")/lib/intents.sh"     (before the script leaves the repository's root)
#   gen_intents > data.tsv                 144 lines "utterance<TAB>label": music.play,
#                                          music.pause and navigation.navigation, 48 each
#   intents_data                           data.tsv and its Example stream data.pb in the
#                                          current directory (needs $GYRO)
# shellcheck shell=bash

gen_intents() {
  local pre=("" "请" "帮我" "麻烦") post=("" "吧" "一下" "好吗")
  for a in 播放 来一首 我想听; do for b in 稻香 晴天 七里香 夜曲; do for p in "${pre[@]}"; do
    echo -e "${p}${a}${b}\tmusic.play"; done; done; done
  for a in 暂停 停止播放 别放了; do for p in "${pre[@]}"; do for q in "${post[@]}"; do
    echo -e "${p}${a}${q}\tmusic.pause"; done; done; done
  for a in 导航到 带我去 去; do for b in 北京西站 机场 公司 学校; do for p in "${pre[@]}"; do
    echo -e "${p}${a}${b}\tnavigation.navigation"; done; done; done
}

intents_data() {
  gen_intents > data.tsv
  "$GYRO" import -f tsv -q -o data.pb data.tsv
}
