import unittest

from word_index import build_index, search, words

DOCUMENTS = {
    1: "The cat sat on the mat.",
    2: "Don't let the cat out!",
    3: "A dog and a cat_fish.",
}


class WordsTest(unittest.TestCase):
    def test_lower_case_words_in_order(self):
        self.assertEqual(words("The cat sat on the mat."), ["the", "cat", "sat", "on", "the", "mat"])

    def test_apostrophes_inside_words(self):
        self.assertEqual(words("Don't 'quote' me"), ["don't", "quote", "me"])

    def test_underscores_and_digits(self):
        self.assertEqual(words("cat_fish 42b"), ["cat", "fish", "42b"])


class IndexTest(unittest.TestCase):
    def setUp(self):
        self.index = build_index(DOCUMENTS)

    def test_each_word_lists_its_documents(self):
        self.assertEqual(self.index["cat"], [1, 2, 3])
        self.assertEqual(self.index["the"], [1, 2])
        self.assertEqual(self.index["don't"], [2])

    def test_search_needs_every_word(self):
        self.assertEqual(search(self.index, "the cat"), [1, 2])
        self.assertEqual(search(self.index, "cat mat"), [1])

    def test_search_for_an_unknown_word_or_nothing(self):
        self.assertEqual(search(self.index, "cat unicorn"), [])
        self.assertEqual(search(self.index, "!!"), [])


if __name__ == "__main__":
    unittest.main()
