package genai

import (
	"math/rand/v2"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CountTokens is text's length in the project's pseudo-tokens: the number
// of maximal runs of non-space characters (unicode.IsSpace), as
// strings.Fields splits them. No tokenizer is needed and every part of
// the project (the clients, the simulated server, the data set reader)
// counts alike; docs/genai.md says how it compares with a real
// tokenizer. Invalid UTF-8 counts as non-space. It allocates nothing.
func CountTokens(text string) int {
	n, inWord := 0, false
	for i := 0; i < len(text); {
		c := text[i]
		var space bool
		if c < utf8.RuneSelf {
			space = asciiSpace[c]
			i++
		} else {
			r, size := utf8.DecodeRuneInString(text[i:])
			space = unicode.IsSpace(r)
			i += size
		}
		if !space && !inWord {
			n++
		}
		inWord = !space
	}
	return n
}

// asciiSpace is unicode.IsSpace for ASCII, as strings.Fields has it.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// The streams of synthetic words: a sample's own text and a shared prefix
// never draw the same words for the same index.
const (
	streamSample uint64 = 0x73616d706c65 // "sample"
	streamPrefix uint64 = 0x707265666978 // "prefix"
)

// SyntheticText is the synthetic prompt of sample sampleIndex (seed 0):
// tokens words from a fixed list of common English words, single-spaced,
// so that CountTokens gives tokens back. The same index gives the same
// text on every run and platform; different indices differ from their
// first words (a server's prefix cache shares nothing between them).
// tokens ≤ 0 gives "".
func SyntheticText(sampleIndex, tokens int) string {
	return syntheticText(0, streamSample, uint64(sampleIndex), tokens)
}

// syntheticText draws tokens words for (seed, stream, index): a PCG
// (math/rand/v2's, whose algorithm is fixed) seeded with (seed^stream,
// index) gives 8 words per 64-bit draw, one byte each indexing words.
func syntheticText(seed, stream, index uint64, tokens int) string {
	if tokens <= 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(tokens * 6)
	appendWords(&b, rand.NewPCG(seed^stream, index), tokens)
	return b.String()
}

func appendWords(b *strings.Builder, g *rand.PCG, tokens int) {
	var bits uint64
	for i := range tokens {
		if i%8 == 0 {
			bits = g.Uint64()
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[byte(bits)])
		bits >>= 8
	}
}

// words are 256 common, short, lowercase English words: most BPE
// tokenizers (GPT-2's, Llama's) encode each, after a space, as one token,
// so a synthetic prompt's real length is near its pseudo-token count.
var words = [256]string{
	"the", "of", "and", "to", "in", "is", "that", "for", "it", "as",
	"was", "with", "be", "by", "on", "not", "he", "this", "are", "or",
	"his", "from", "at", "which", "but", "have", "an", "had", "they", "you",
	"were", "their", "one", "all", "we", "can", "her", "has", "there", "been",
	"if", "more", "when", "will", "would", "who", "so", "no", "she", "other",
	"its", "may", "these", "what", "them", "than", "some", "him", "time", "into",
	"only", "do", "like", "could", "new", "two", "then", "first", "also", "any",
	"my", "now", "such", "over", "our", "even", "most", "me", "made", "after",
	"many", "must", "before", "years", "way", "well", "should", "through", "back", "where",
	"much", "good", "your", "still", "own", "see", "men", "work", "long", "get",
	"here", "between", "both", "life", "being", "under", "never", "day", "same", "another",
	"know", "while", "last", "might", "us", "great", "old", "year", "off", "come",
	"since", "against", "go", "came", "right", "used", "take", "three", "state", "world",
	"does", "few", "how", "small", "down", "house", "use", "part", "war", "place",
	"end", "water", "just", "high", "little", "every", "people", "name", "because", "each",
	"found", "those", "number", "law", "without", "city", "once", "power", "general", "again",
	"school", "set", "left", "home", "order", "point", "given", "large", "next", "early",
	"hand", "air", "find", "system", "group", "head", "real", "best", "far", "line",
	"free", "form", "keep", "second", "light", "music", "case", "open", "change", "play",
	"team", "body", "land", "book", "game", "love", "week", "side", "story", "road",
	"study", "face", "night", "fact", "human", "court", "area", "mind", "money", "month",
	"field", "rate", "party", "art", "level", "class", "table", "food", "blue", "green",
	"red", "black", "white", "tree", "river", "sea", "sun", "star", "moon", "fire",
	"stone", "door", "wall", "bridge", "ship", "train", "car", "bird", "dog", "horse",
	"fish", "king", "queen", "town", "room", "window", "paper", "letter", "voice", "song",
	"heart", "eye", "foot", "arm", "hair", "dream",
}
