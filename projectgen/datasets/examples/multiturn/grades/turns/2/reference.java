public class Grades {
    public static String letter(int score) {
        if (score < 0 || score > 100) {
            throw new IllegalArgumentException("a score is between 0 and 100, got " + score);
        }
        if (score >= 90) {
            return "A";
        }
        if (score >= 80) {
            return "B";
        }
        if (score >= 70) {
            return "C";
        }
        return "F";
    }
}
