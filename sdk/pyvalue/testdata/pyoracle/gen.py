# Regenerates this directory's oracle files with CPython (used: 3.11.7):
#   cd core/train/testdata/pyoracle && python3 gen.py
# strings_floats.jsonl: str.lower(), str.strip(), repr(), json.dumps(ensure_ascii=False)
# of random strings over the code points FTRL's reward is sensitive to, and repr() of
# random floats (by their bits); json.jsonl: whether json.loads accepts a random
# JSON-like snippet and json.dumps(ensure_ascii=False) of the result.
# Read by TestPythonOracle (ftrl_py_test.go).

# part 1
import json, random, struct, math
rnd = random.Random(5)
pool = [chr(c) for c in list(range(0x20,0x7f)) + [0x1c,0x1d,0x1e,0x1f,0x85,0xa0,0x130,0x131,0x3a3,0x3c3,0x3c2,0x391,0x345,0x307,0x2e,0x27,0x3a,0xb7,0x2019,0x1680,0x2000,0x200a,0x200b,0x2028,0x2029,0x202f,0x205f,0x3000,0xfeff,0x180e,0x2060,0xdf,0x1e9e,0x1c5,0x1f88,0xff21,0x10400,0x1f600,0x4e1c,0xad,0x7f,0x9,0xa,0xd,0xb,0xc,0x0,0x1]]
out = open('strings_floats.jsonl','w',encoding='utf-8')
for i in range(3000):
    s = ''.join(rnd.choice(pool) for _ in range(rnd.randint(0,8)))
    out.write(json.dumps({"s": s, "lower": s.lower(), "strip": s.strip(), "repr": repr(s), "dumps": json.dumps(s, ensure_ascii=False)}, ensure_ascii=True)+"\n")
for i in range(3000):
    b = struct.pack('<Q', rnd.getrandbits(64)); f = struct.unpack('<d', b)[0]
    if rnd.random() < 0.5: f = rnd.choice([1,-1])*rnd.randint(0,10**rnd.randint(0,20)) / 10**rnd.randint(0,25)
    if math.isnan(f) or math.isinf(f): continue
    out.write(json.dumps({"f": f, "frepr": repr(f), "bits": struct.unpack('<Q', struct.pack('<d', f))[0]})+"\n")

out.close()

# part 2
import json, random
rnd = random.Random(9)
atoms = ['1','-0','0.5','1e2','1E+2','-1.5e-7','01','1.','NaN','-Infinity','Infinity','1e400','true','false','null','"a"','"\\u00e9"','"\\ud83d\\ude00"','"x\\ny"','"\\t"','""','"é東"','tru','"\\x"',"'a'",'-','.5','2.5e16','12345678901234567890']
def gen(d=0):
    r = rnd.random()
    if d > 3 or r < 0.4: return rnd.choice(atoms)
    if r < 0.7:
        return '[' + ', '.join(gen(d+1) for _ in range(rnd.randint(0,3))) + rnd.choice(['',']',',]',']']) 
    ks = ['"a"','"b"','"a"','"é"']
    return '{' + ','.join(rnd.choice(ks)+rnd.choice([':',': ',' : ']) + gen(d+1) for _ in range(rnd.randint(0,3))) + rnd.choice(['}','}','},',''])
out = open('json.jsonl','w')
for i in range(4000):
    s = gen()
    if rnd.random() < 0.2: s = rnd.choice([' ','\n','\ufeff','\t','\x0b']) + s + rnd.choice(['',' ','x','\r\n'])
    try:
        v = json.loads(s); d = json.dumps(v, ensure_ascii=False); ok = True
    except Exception as e:
        d = None; ok = False
    out.write(json.dumps({"s": s, "ok": ok, "d": d})+"\n")

out.close()
