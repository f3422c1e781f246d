"""make_examples.py — write a gyro Example stream for the gRPC tests and benchmarks.

    make_examples.py GEN toy OUT.pb TEXTS.txt
    make_examples.py GEN nlpcc CORPUS.txt OUT.pb TEXTS.txt [LIMIT]

`toy` is a small three-intent set (with one composite label) that trains in a second; `nlpcc`
reads NLPCC 2018 task 4 (`session \\t utterance \\t domain.intent \\t tagged`, blank line between
sessions). TEXTS.txt receives utterances for the clients to send (one per line). The stream is
the delimited framing of pipeline/stream.h: StreamHeader, then one Example per record.
"""
import random
import sys

sys.path.insert(0, sys.argv[1])
import gyro_pb2  # noqa: E402


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def write(path, examples):
    with open(path, "wb") as f:
        h = gyro_pb2.StreamHeader(magic="gyro", version=1, message_type="gyro.v1.Example",
                                  producer="tests/py/make_examples.py").SerializeToString()
        f.write(varint(len(h)) + h)
        for e in examples:
            b = e.SerializeToString()
            f.write(varint(len(b)) + b)


def example(text, label, source, session, line):
    return gyro_pb2.Example(text=text, label=label, labels=sorted(label.split("+")), source=source,
                            session=session, line=line)


def toy(out, texts_out):
    rnd = random.Random(7)
    songs = ["七里香", "稻香", "晴天", "夜曲", "青花瓷", "告白气球", "小幸运", "平凡之路"]
    places = ["北京西站", "人民广场", "首都机场", "西湖", "中关村", "火车站", "浦东机场", "天安门"]
    names = ["张三", "李四", "王五", "妈妈", "老板", "小明", "爸爸", "老师"]
    pat = {
        "music.play": ["播放{s}", "我想听{s}", "来一首{s}", "放一首{s}的歌"],
        "navigation.navigation": ["导航到{p}", "去{p}怎么走", "带我去{p}", "我要去{p}"],
        "phone_call.make_a_phone_call": ["打电话给{n}", "给{n}打个电话", "呼叫{n}", "拨打{n}的电话"],
        "music.play+navigation.navigation": ["导航到{p}并播放{s}", "去{p}的路上放{s}"],
    }
    ex, texts, k = [], [], 0
    for label, ps in pat.items():
        for p in ps:
            for _ in range(6):
                t = p.format(s=rnd.choice(songs), p=rnd.choice(places), n=rnd.choice(names))
                k += 1
                ex.append(example(t, label, "toy", "s%d" % k, k))
                texts.append(t)
    rnd.shuffle(ex)
    write(out, ex)
    with open(texts_out, "w", encoding="utf-8") as f:
        f.write("\n".join(texts[::5]) + "\n")


def nlpcc(corpus, out, texts_out, limit):
    ex, texts = [], []
    with open(corpus, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            parts = line.rstrip("\r\n").split("\t")
            if len(parts) < 3 or not parts[1].strip():
                continue
            ex.append(example(parts[1], parts[2], "nlpcc2018:corpus.train.txt", parts[0], n))
            texts.append(parts[1])
            if limit and len(ex) >= limit:
                break
    write(out, ex)
    with open(texts_out, "w", encoding="utf-8") as f:
        f.write("\n".join(texts[:2000]) + "\n")


if __name__ == "__main__":
    if sys.argv[2] == "toy":
        toy(sys.argv[3], sys.argv[4])
    else:
        nlpcc(sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6]) if len(sys.argv) > 6 else 0)
